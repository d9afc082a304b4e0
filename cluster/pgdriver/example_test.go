package pgdriver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A node's round with the store: migrate at start, schedule, claim what
// is due with a lease, run it and record the outcome.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@localhost/app")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	if _, err := pgdriver.Migrate(ctx, pool); err != nil {
		panic(err)
	}
	store, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil {
		panic(err)
	}
	res, err := store.Schedule(ctx, pgdriver.Task{ID: "invoice-42", Kind: "mail", Payload: []byte("42"),
		Due: time.Now().Add(time.Minute), MaxRetries: 5})
	if err != nil {
		panic(err)
	}
	fmt.Println("schedule:", res)
	claims, err := store.ClaimDue(ctx, pgdriver.ClaimDueParams{Token: "node-a/1", Lease: 30 * time.Second, Limit: 10})
	if err != nil {
		panic(err)
	}
	for _, c := range claims {
		if _, err := store.Complete(ctx, c.Task.ID, "node-a/1", pgdriver.Ending{Retention: 24 * time.Hour}); err != nil {
			panic(err)
		}
	}
}
