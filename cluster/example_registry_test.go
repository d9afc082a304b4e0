package cluster_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
)

// Which replicas are up, and what each is doing, read from any node, even
// one never started. (Compiled, not run: it needs a Redis server.)
func ExampleNode_Members() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	members, err := node.Members(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range members {
		state := "running"
		if m.Stopping {
			state = "stopping"
		}
		fmt.Printf("%s %s pid %d %s: %d/%d workers busy, %d waiting, kinds %v, seen %v ago\n",
			m.Name, m.Host, m.PID, state, m.Running, m.Concurrency, m.Waiting, m.Kinds,
			time.Since(m.Heartbeat).Round(time.Second))
	}
}

// The periodic tasks the live replicas declare, with their last run.
// (Compiled, not run: it needs a Redis server.)
func ExampleNode_PeriodicTasks() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	tasks, err := node.PeriodicTasks(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range tasks {
		fmt.Printf("%s (%s) next %v on %v\n", p.Name, p.Trigger, p.Next, p.Nodes)
		if r := p.LastRun; r != nil {
			fmt.Printf("  last: %v on %s, %s in %v %s\n", r.Due, r.Node, r.Outcome, r.Ended.Sub(r.Started), r.Error)
		}
	}
}

// Kinds that share scarce workers: "payment" gets three workers for every
// one "report" gets while both wait, and at most two reports run at once on
// this node, whatever else waits. (Compiled, not run: it needs a Redis
// server.)
func ExampleWithKindPriority() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", PoolSize: 16})
	defer rdb.Close()
	node, err := cluster.New(rdb, cluster.WithConcurrency(8))
	if err != nil {
		log.Fatal(err)
	}
	pay := func(ctx context.Context, t cluster.Task) error { return nil }
	report := func(ctx context.Context, t cluster.Task) error { return nil }
	if err := node.Handle("payment", pay, cluster.WithKindPriority(3)); err != nil {
		log.Fatal(err)
	}
	if err := node.Handle("report", report, cluster.WithKindPriority(1), cluster.WithKindConcurrency(2)); err != nil {
		log.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(context.Background())
}
