package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cron"
)

// A replica of a service: it handles "email" tasks, runs a cluster-once
// report every night, schedules a task for later, and stops on SIGTERM,
// handing back what it claimed but did not start. Run several replicas
// against one Redis: each task and each nightly report runs on one of them.
// (Compiled, not run: it needs a Redis server.)
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb, cluster.WithLease(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	err = node.Handle("email", func(ctx context.Context, t cluster.Task) error {
		var to string
		if err := json.Unmarshal(t.Payload, &to); err != nil {
			return err // a failed attempt: retried, then dead
		}
		fmt.Println("mail to", to, "due", t.Due, "attempt", t.Attempt)
		return nil
	}, cluster.WithTaskTimeout(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	nightly := cron.MustParse("0 3 * * *", cron.In(time.UTC))
	if err := node.Periodic("report", nightly, func(ctx context.Context, t cluster.Task) error {
		fmt.Println("report for", t.Due.Format(time.DateOnly))
		return nil
	}); err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	payload, _ := json.Marshal("ada@example.com")
	// An ID makes the call idempotent: a retried Schedule stores it once.
	if _, err := node.Schedule(ctx, "email", payload, time.Now().Add(time.Hour), cluster.WithID("welcome-ada")); err != nil {
		log.Print(err)
	}

	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.Stop(stopCtx); err != nil {
		log.Print(err)
	}
}

// Cancel removes a stored task whatever its state, and says whether a run
// of it was in flight (that run's ctx is then canceled).
func ExampleNode_Cancel() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb) // a producer: no handlers, not started
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := node.Cancel(ctx, "welcome-ada")
	switch {
	case err != nil:
		log.Print(err)
	case c.WasRunning:
		fmt.Println("removed; its run in flight is canceled")
	case c.Removed:
		fmt.Println("removed before it ran")
	default:
		fmt.Println("no such task")
	}
}

// A node on a Redis Cluster: the prefix's hash tag puts every key of the
// store in one slot, and WithReplicaAcks makes Schedule and Cancel return
// only once a replica holds the write, so that a failover of that slot's
// master loses nothing acknowledged. An error wrapping ErrNotReplicated
// means no replica acknowledged in time: retry with the same WithID.
// (Compiled, not run: it needs a Redis Cluster.)
func ExampleWithReplicaAcks() {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:    []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"},
		PoolSize: 32, // per server, above the node's concurrency plus 4
	})
	defer rdb.Close()
	node, err := cluster.New(rdb, cluster.WithPrefix("{billing}"), cluster.WithReplicaAcks(1, time.Second))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	due := time.Now().Add(time.Hour)
	for attempt := 1; ; attempt++ {
		_, err := node.Schedule(ctx, "invoice", []byte("order-42"), due, cluster.WithID("invoice-order-42"))
		if err == nil {
			break
		}
		if !errors.Is(err, cluster.ErrNotReplicated) || attempt == 3 {
			log.Fatal(err)
		}
	}
}
