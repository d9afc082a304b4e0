// Command example runs one replica of a service that uses package cluster:
// it handles "reminder" tasks, runs a cluster-once "report" every 10
// seconds (a cron spec), and schedules a reminder every few seconds, due a
// few seconds later. Run three of them against one redis-server and watch
// each reminder and each report run on exactly one of them; kill one with
// Ctrl-C (graceful) or kill -9 (its running task comes back after the
// lease) and watch the others carry on.
//
//	redis-server --port 6379 --appendonly yes --appendfsync always
//	go run ./example -name a &
//	go run ./example -name b &
//	go run ./example -name c &
//
// from the cluster folder. Each replica prints the Redis it runs on (its
// password redacted), a stpectl command to inspect the tasks with, and
// what it runs. -redis takes every form of package redisconn (one server,
// a Redis Cluster's seeds, Sentinel), and the environment variables too
// (STPE_REDIS_URL, STPE_REDIS_PASSWORD...).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/go-stpe/scheduler/cron"
)

// prefix is the key prefix of the example's tasks.
const prefix = "{example}"

func main() {
	conn := redisconn.FromEnv(os.Getenv)
	conn.RegisterFlags(flag.CommandLine)
	name := flag.String("name", fmt.Sprint(os.Getpid()), "name printed with each run")
	every := flag.Duration("every", 3*time.Second, "how often this replica schedules a reminder (0: never)")
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)

	conn.PoolSize = 32
	rdb, err := conn.Open()
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()
	node, err := cluster.New(rdb,
		cluster.WithPrefix(prefix),
		cluster.WithLease(5*time.Second),
		cluster.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Handle("reminder", func(_ context.Context, t cluster.Task) error {
		log.Printf("%s: reminder %q, due %s, started %v late (attempt %d)",
			*name, t.Payload, t.Due.Format("15:04:05.000"), time.Since(t.Due).Round(time.Microsecond), t.Attempt)
		return nil
	}); err != nil {
		log.Fatal(err)
	}
	every10s, err := cron.Parse("*/10 * * * * *", cron.WithSeconds())
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Periodic("report", every10s, func(_ context.Context, t cluster.Task) error {
		log.Printf("%s: report for %s (once across all replicas)", *name, t.Due.Format("15:04:05"))
		return nil
	}); err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: replica started on redis %s; inspect its tasks with\n\t%s", *name, conn, stpectlCommand(conn, prefix))

	if *every > 0 {
		t := time.NewTicker(*every)
		defer t.Stop()
		for i := 1; ; i++ {
			select {
			case <-ctx.Done():
			case <-t.C:
				payload := fmt.Sprintf("%s-%d", *name, i)
				if _, err := node.Schedule(ctx, "reminder", []byte(payload), time.Now().Add(2*time.Second)); err != nil {
					log.Printf("%s: schedule: %v", *name, err)
				}
				continue
			}
			break
		}
	} else {
		<-ctx.Done()
	}

	log.Printf("%s: stopping; claimed tasks not started go back to Redis", *name)
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.Stop(stopCtx); err != nil {
		log.Printf("%s: stop: %v (running tasks handed back)", *name, err)
	}
}
