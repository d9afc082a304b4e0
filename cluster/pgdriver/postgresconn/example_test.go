package postgresconn_test

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// A tool that reads both stores: each package's flags and variables, the
// one rule of which store it uses, and only redacted addresses printed.
func Example() {
	redisConn := redisconn.FromEnv(os.Getenv)
	pgConn := postgresconn.FromEnv(os.Getenv)
	fs := flag.NewFlagSet("mytool", flag.ExitOnError)
	redisConn.RegisterFlags(fs)
	pgConn.RegisterFlags(fs)
	_ = fs.Parse([]string{"-postgres", "postgres://ops:s3cret@127.0.0.1:5432/app?sslmode=disable"})
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	usePostgres, err := pgConn.Chosen(given, os.Getenv)
	if err != nil {
		log.Fatal(err) // -postgres and -redis: give one store, Redis or PostgreSQL
	}
	if !usePostgres {
		fmt.Println("redis:", redisConn)
		return
	}
	pgConn.ConnectTimeout = 5 * time.Second
	pool, err := pgConn.Open() // connects on first use
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	// postgresconn.RecordedDriver(ctx, pool) then gives the driver with
	// the partitions the database records, for cluster.NewWithDriver.
	fmt.Println("postgres:", pgConn, "at", postgresconn.Addr(pool))
	// Output: postgres: postgres://***@127.0.0.1:5432/app?sslmode=disable at 127.0.0.1:5432/app
}
