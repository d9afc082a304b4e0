package cluster_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/driver"
)

// A node on a store other than Redis. The driver carries the store's own
// settings (its connection, its number of partitions); the options carry
// only the node's. With PostgreSQL, store is a *pgdriver.Driver (the
// module github.com/go-stpe/scheduler/cluster/pgdriver, whose example
// also schedules a task inside the caller's transaction). (Compiled, not
// run: it needs a store.)
func ExampleNewWithDriver() {
	ctx := context.Background()
	node, err := cluster.NewWithDriver(store, cluster.WithConcurrency(8), cluster.WithLease(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	err = node.Handle("email", func(ctx context.Context, t cluster.Task) error {
		fmt.Printf("mail %s (attempt %d)\n", t.Payload, t.Attempt)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	if _, err := node.Schedule(ctx, "email", []byte("ada@example.com"), time.Now().Add(time.Minute)); err != nil {
		log.Fatal(err)
	}
}

// store stands for the driver a driver package returns.
var store driver.Driver
