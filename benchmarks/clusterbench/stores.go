package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/benchmarks/internal/cputime"
	"github.com/go-stpe/scheduler/cluster"
)

// The store pass (-stores): how fast each way of storing tasks due in an
// hour goes, and what it costs the client and Redis per task, in the same
// run on the same redis-server: the cluster's Schedule and ScheduleMany,
// and asynq's Client.Enqueue (asynq has no batch call). River's
// InsertMany needs Postgres, which this benchmark does not start.

// storer is one way of storing: store stores n tasks and returns when
// Redis holds them all.
type storer struct {
	name  string
	store func(addr string, n int) error
}

func storers(batch int) []storer {
	return []storer{
		{"cluster Schedule, 16 goroutines", clusterScheduleEach},
		{fmt.Sprintf("cluster ScheduleMany, batches of %d, 1 goroutine", batch), func(addr string, n int) error { return clusterScheduleMany(addr, n, batch, 1) }},
		{fmt.Sprintf("cluster ScheduleMany, batches of %d, 4 goroutines", batch), func(addr string, n int) error { return clusterScheduleMany(addr, n, batch, 4) }},
		{"asynq Enqueue, 16 goroutines", asynqEnqueueEach},
	}
}

// storeRow is one storer's median pass.
type storeRow struct {
	name          string
	n             int
	perSec        float64
	cpu, redisCPU time.Duration
	cmds, scripts float64 // Redis commands (those inside scripts included) and scripts, per task
	netIn, netOut float64 // bytes Redis read and wrote, per task
}

// runStores runs every storer runs times, interleaved, n tasks each, and
// prints the table of the median passes by rate.
func runStores(rdb *redis.Client, addr string, n, batch, runs int, version string) {
	ctx := context.Background()
	sts := storers(batch)
	passes := make([][]storeRow, len(sts))
	for pass := range max(runs, 1) {
		for i, st := range sts {
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				log.Fatal(err)
			}
			before, err := readCounts(ctx, rdb)
			if err != nil {
				log.Fatal(err)
			}
			cpu0, rcpu0 := cputime.Process(), redisCPU(rdb)
			start := time.Now()
			if err := st.store(addr, n); err != nil {
				log.Fatalf("%s: %v", st.name, err)
			}
			el := time.Since(start)
			cpu, rcpu := cputime.Process()-cpu0, redisCPU(rdb)-rcpu0
			after, err := readCounts(ctx, rdb)
			if err != nil {
				log.Fatal(err)
			}
			d := before.to(after)
			stored, err := rdb.DBSize(ctx).Result()
			if err != nil {
				log.Fatal(err)
			}
			r := storeRow{name: st.name, n: n, perSec: float64(n) / el.Seconds(), cpu: cpu, redisCPU: rcpu,
				cmds: float64(d.commands) / float64(n), scripts: float64(d.scripts) / float64(n),
				netIn: float64(d.netIn) / float64(n), netOut: float64(d.netOut) / float64(n)}
			log.Printf("store pass %d, %s: %.0f tasks/s, client CPU %v, redis CPU %v, %.2f commands/task (%s), %d keys in Redis",
				pass+1, st.name, r.perSec, cpu, rcpu, r.cmds, commandList(d.byCommand, n), stored)
			passes[i] = append(passes[i], r)
		}
	}
	fmt.Printf("\nStoring %d tasks due in an hour on one redis-server %s (no AOF), median of %d interleaved passes by rate; 1-minute load average at the end %s.\n\n",
		n, version, runs, loadAverage())
	fmt.Print("| How | tasks/s | × cluster Schedule | client CPU / 1k tasks | redis CPU / 1k tasks | Redis commands / task (in scripts too) | scripts / task | bytes to / from Redis per task |\n|---|---|---|---|---|---|---|---|\n")
	var base float64
	for i, ps := range passes {
		sort.Slice(ps, func(a, b int) bool { return ps[a].perSec < ps[b].perSec })
		r := ps[len(ps)/2]
		if i == 0 {
			base = r.perSec
		}
		per := func(d time.Duration) string { return ms(d / time.Duration(max(r.n/1000, 1))) }
		fmt.Printf("| %s | %.0f | %.1f× | %s | %s | %.2f | %.3f | %.0f / %.0f |\n", r.name, r.perSec, r.perSec/base,
			per(r.cpu), per(r.redisCPU), r.cmds, r.scripts, r.netIn, r.netOut)
	}
}

// commandList lists the commands per task, most first.
func commandList(by map[string]int64, n int) string {
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return by[names[i]] > by[names[j]] })
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %.3f", k, float64(by[k])/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// storingNode is a node that only stores, on its own client.
func storingNode(addr string) (*cluster.Node, func(), error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
	node, err := cluster.New(c)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return node, func() { _ = node.Stop(context.Background()); _ = c.Close() }, nil
}

func clusterScheduleEach(addr string, n int) error {
	node, done, err := storingNode(addr)
	if err != nil {
		return err
	}
	defer done()
	due := time.Now().Add(time.Hour)
	_, err = storeConcurrently(n, func(i int) error {
		_, err := node.Schedule(context.Background(), "bench", []byte(strconv.Itoa(i)), due)
		return err
	})
	return err
}

// clusterScheduleMany stores n tasks in batches of batch from goroutines
// goroutines.
func clusterScheduleMany(addr string, n, batch, goroutines int) error {
	node, done, err := storingNode(addr)
	if err != nil {
		return err
	}
	defer done()
	due := time.Now().Add(time.Hour)
	batches := (n + batch - 1) / batch
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for b := g; b < batches; b += goroutines {
				tasks := make([]cluster.ScheduleManyParams, 0, batch)
				for i := b * batch; i < min(n, (b+1)*batch); i++ {
					tasks = append(tasks, cluster.ScheduleManyParams{Kind: "bench", Payload: []byte(strconv.Itoa(i)), Due: due})
				}
				if _, err := node.ScheduleMany(context.Background(), tasks); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func asynqEnqueueEach(addr string, n int) error {
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: addr, PoolSize: 32})
	defer client.Close()
	due := time.Now().Add(time.Hour)
	_, err := storeConcurrently(n, func(i int) error {
		_, err := client.Enqueue(asynq.NewTask("bench", []byte(strconv.Itoa(i))), asynq.ProcessAt(due))
		return err
	})
	return err
}
