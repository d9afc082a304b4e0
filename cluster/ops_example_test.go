package cluster_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
)

// List pages through the dead tasks of one kind, newest first; the cursor
// of each page leads to the next. (Compiled, not run: it needs a Redis
// server.)
func ExampleNode_List() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb) // a producer: no handlers, not started
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	q := cluster.ListQuery{State: cluster.Dead, Kind: "email", Limit: 100}
	for {
		page, err := node.List(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		for _, t := range page.Tasks {
			fmt.Println(t.ID, t.Attempt, t.LastError)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
}

// Get shows where a task is and how each of its last runs ended.
func ExampleNode_Get() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	info, ok, err := node.Get(context.Background(), "welcome-ada")
	switch {
	case err != nil:
		log.Fatal(err)
	case !ok:
		fmt.Println("no such task")
		return
	}
	fmt.Println(info.State, "retrying:", info.Retrying, "owner:", info.Owner)
	for _, r := range info.History {
		fmt.Println(r.Node, r.Start.Format(time.RFC3339), r.End.Sub(r.Start), r.Outcome, r.Error)
	}
}

// Pause holds a kind on every node while its handler is fixed; Resume
// runs what waited, each task at its due time or at once if overdue.
func ExampleNode_Pause() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := node.Pause(ctx, "email"); err != nil {
		log.Fatal(err)
	}
	_, kinds, err := node.CountsByKind(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range kinds {
		fmt.Println(k.Kind, "pending", k.Pending, "running", k.Running, "paused", k.Paused)
	}
	// ... deploy the fixed handler ...
	if err := node.Resume(ctx, "email"); err != nil {
		log.Fatal(err)
	}
}

// RetryAll retries every dead task of one kind (once its handler is fixed),
// after a confirmation of how many that is. (Compiled, not run: it needs
// a Redis server.)
func ExampleNode_RetryAll() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	sel := cluster.Selection{State: cluster.Dead, Kind: "email"}
	n, err := node.CountSelected(ctx, sel)
	if err != nil {
		log.Fatal(err) // errors.Is(err, cluster.ErrUnknownKind) for a typo
	}
	fmt.Println("retrying", n, "dead email tasks")
	res, err := node.RetryAll(ctx, sel)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Changed, "retried,", res.Matched-res.Changed, "had moved on")
}
