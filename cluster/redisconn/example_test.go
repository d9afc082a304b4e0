package redisconn_test

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// A tool reads the environment, lets its flags override it, opens the
// client the address describes, and prints the address only redacted.
func Example() {
	conn := redisconn.FromEnv(os.Getenv)
	conn.DialTimeout = 2 * time.Second
	fs := flag.NewFlagSet("mytool", flag.ExitOnError)
	conn.RegisterFlags(fs)
	_ = fs.Parse([]string{"-redis", "redis://admin:s3cret@127.0.0.1:6379/0"})

	rdb, err := conn.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	_ = node
	fmt.Println("redis:", conn)
	// Output: redis: redis://***@127.0.0.1:6379/0
}

func ExampleRedact() {
	fmt.Println(redisconn.Redact(`dial "redis://admin:s3cret@db:6379/0": connection refused`))
	// Output: dial "redis://***@db:6379/0": connection refused
}
