package main

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkCommand times whole runs of the built command, process start
// and Redis dial included, against a store of 100,000 pending tasks of ten
// kinds, on one server and on a three-master Redis Cluster: help (the
// process alone, no Redis), counts, a page of 100 of every kind and of one
// kind, show, and health.
//
//	cd cluster && go test -run '^$' -bench Command -benchtime 20x ./cmd/stpectl/
func BenchmarkCommand(b *testing.B) {
	b.Run("server", func(b *testing.B) {
		srv := redistest.Start(b, redistest.Options{})
		benchCommands(b, []string{"-redis", srv.Addr}, func() redis.UniversalClient { return srv.Client() })
	})
	b.Run("cluster", func(b *testing.B) {
		c := redistest.StartCluster(b, redistest.ClusterOptions{})
		benchCommands(b, []string{"-redis", strings.Join(c.Addrs(), ",")}, func() redis.UniversalClient { return c.Client() })
	})
}

// benchCommands fills the Redis that newClient reaches and times each
// command run with redisArgs.
func benchCommands(b *testing.B, redisArgs []string, newClient func() redis.UniversalClient) {
	rdb := newClient()
	defer rdb.Close()
	// A node that starts writes the keyspace's layout record, as in
	// production.
	starter, err := cluster.New(rdb, cluster.WithPrefix("{bench}"), cluster.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	if err := starter.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	starter.StopNow()
	node, err := cluster.New(rdb, cluster.WithPrefix("{bench}"))
	if err != nil {
		b.Fatal(err)
	}
	const tasks, workers = 100000, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < tasks; i += workers {
				due := time.Now().Add(time.Hour + time.Duration(i)*time.Millisecond)
				if _, err := node.Schedule(context.Background(), fmt.Sprint("kind", i%10), []byte(`{"n":1}`), due,
					cluster.WithID(fmt.Sprint("t", i))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"help", []string{"help"}},
		{"counts", []string{"counts"}},
		{"list100", []string{"list", "-limit", "100"}},
		{"list100json", []string{"-json", "list", "-limit", "100"}},
		{"list100kind", []string{"list", "-kind", "kind3", "-limit", "100"}},
		{"show", []string{"show", "t500"}},
		{"health", []string{"health", "-min-nodes", "0"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := append(append(append([]string{}, redisArgs...), "-prefix", "{bench}"), bc.args...)
			for b.Loop() {
				if out, err := exec.Command(stpectlBin, args...).CombinedOutput(); err != nil {
					b.Fatalf("stpectl %v: %v\n%s", bc.args, err, out)
				}
			}
		})
	}
}
