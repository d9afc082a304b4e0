package pgdriver_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A cluster node on PostgreSQL, and the transactional schedule: an order
// and the task that mails its confirmation are stored in one transaction
// of the service's own, so the mail goes out if and only if the order is
// committed. Open migrates the database (safe from every node at start)
// and returns the driver; the node runs on it as on Redis. (Compiled, not
// run: it needs a database.)
func Example_scheduleTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@localhost/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	d, err := pgdriver.Open(ctx, pool, pgdriver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	node, err := cluster.NewWithDriver(d, cluster.WithLease(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	err = node.Handle("mail", func(ctx context.Context, t cluster.Task) error {
		fmt.Printf("mail the confirmation of order %s\n", t.Payload)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx) // a no-op once committed
	if _, err := tx.Exec(ctx, "INSERT INTO orders (id, total_cents) VALUES ($1, $2)", "42", 1999); err != nil {
		log.Fatal(err)
	}
	// The task's ID is the order's: scheduling it again (a retried
	// request) stores nothing more.
	_, err = d.Store().ScheduleTx(ctx, tx, pgdriver.Task{ID: "mail-order-42", Kind: "mail",
		Payload: []byte("42"), Due: time.Now(), MaxRetries: 5, Fixed: true})
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err) // neither the order nor its mail is stored
	}
}
