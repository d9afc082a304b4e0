package pgdriver_test

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
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

// The transactional schedule for a service on database/sql: an order and
// the task that mails its confirmation go in one *sql.Tx, here of pgx's
// stdlib driver (a *sql.Tx of lib/pq works the same), so the mail is
// stored, and a node hears of it, if and only if the order commits. The
// store itself runs on a pgx pool of the same database. (Compiled, not
// run: it needs a database.)
func ExampleStore_ScheduleSQLTx() {
	ctx := context.Background()
	const url = "postgres://app@localhost/app"
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	store, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil {
		panic(err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		panic(err)
	}
	defer db.Close()

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer tx.Rollback() // a no-op once committed
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, total_cents) VALUES ($1, $2)", "42", 1999); err != nil {
		panic(err)
	}
	// The task's ID is the order's: scheduling it again (a retried
	// request) stores nothing more, and answers Exists.
	res, err := store.ScheduleSQLTx(ctx, tx, pgdriver.Task{ID: "mail-order-42", Kind: "mail",
		Payload: []byte("42"), Due: time.Now(), MaxRetries: 5, Fixed: true})
	if err != nil {
		panic(err)
	}
	if err := tx.Commit(); err != nil {
		panic(err) // neither the order nor its mail is stored
	}
	fmt.Println("schedule:", res)
}
