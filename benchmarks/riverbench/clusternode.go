//go:build clusternode

package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Real cluster nodes on the Postgres driver (cluster.NewWithDriver on
// pgdriver.Open's Driver), in place of the window model of
// storelateness.go: -only node-lateness,node-takeover. Built with the tag
// clusternode, as it needs the driver complete:
//
//	GOWORK=off go run -tags clusternode . -only node-lateness,node-takeover

func init() {
	extraRuns["node-lateness"] = nodeLatenessRuns
	extraRuns["node-takeover"] = nodeTakeoverRuns
}

// nodeConns is the pool size of each node.
const nodeConns = 16

// pgNode is a cluster node on its own pool of db on srv, its driver's
// calls stamped in trace unless it is nil.
func pgNode(ctx context.Context, srv *pgserver.Server, db, name string, trace *taskTrace, opts ...cluster.Option) (*cluster.Node, func(), error) {
	cfg, err := nodePoolConfig(srv, db)
	if err != nil {
		return nil, nil, err
	}
	pool, err := warmPool(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	drv, err := pgdriver.Open(ctx, pool, pgdriver.Options{Node: name})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	var d driver.Driver = drv
	if trace != nil {
		d = traceDriver{Driver: drv, trace: trace}
	}
	node, err := cluster.NewWithDriver(d, opts...)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return node, pool.Close, nil
}

// nodePoolConfig is the configuration of a node's pool on db.
func nodePoolConfig(srv *pgserver.Server, db string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(srv.URL(db))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = nodeConns
	return cfg, nil
}

// nodeLateness runs storeNodes started nodes on a fresh database while a
// node that only schedules stores rate tasks a second, each due ahead,
// and returns how late each handler started after the task's due time.
func nodeLateness(ctx context.Context, srv *pgserver.Server, rate int, duration, ahead time.Duration) (*latencies, error) {
	db := "bench_" + strconv.FormatInt(dbSeq.Add(1), 10)
	if err := srv.CreateDatabase(db); err != nil {
		return nil, err
	}
	if err := serverSetting(ctx, srv, "synchronous_commit", map[bool]string{false: "on", true: "off"}[*asyncCommit]); err != nil {
		return nil, err
	}
	n := int(float64(rate) * duration.Seconds())
	l := &latencies{done: make(chan struct{}), want: n}
	var trace *taskTrace
	stopSampling := func() {}
	if *traceNodes {
		trace = newTaskTrace()
		trace.cpu = readCPU(srv)
		stats, err := statementStats(ctx, srv, db)
		if err != nil {
			return nil, err
		}
		defer func() { fmt.Println(stats()) }()
		sampled, err := pgxpool.New(ctx, srv.URL(db))
		if err != nil {
			return nil, err
		}
		defer sampled.Close()
		sampleCtx, stop := context.WithCancel(ctx)
		stopSampling = stop
		waits := sampleWaits(sampleCtx, sampled)
		trace.machine = sampleMachine(sampleCtx, sampled)
		defer func() {
			stopSampling()
			fmt.Println("  the server's busy backends (mean, sampled every 50 ms):" + waits.String())
		}()
	}
	for i := range storeNodes {
		node, closePool, err := pgNode(ctx, srv, db, "node-"+strconv.Itoa(i), trace, cluster.WithConcurrency(64))
		if err != nil {
			return nil, err
		}
		defer closePool()
		if err := node.Handle("bench", func(ctx context.Context, t cluster.Task) error {
			l.add(time.Since(t.Due))
			if trace != nil {
				trace.started(t.ID, t.Due)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := node.Start(ctx); err != nil {
			return nil, err
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_ = node.Stop(stopCtx)
		}()
	}
	client, closePool, err := pgNode(ctx, srv, db, "client", nil)
	if err != nil {
		return nil, err
	}
	defer closePool()
	payload := []byte(`{"seq":0}`)
	if err := paced(ctx, rate, n, func(i int) error {
		_, err := client.Schedule(ctx, "bench", payload, time.Now().Add(ahead))
		return err
	}); err != nil {
		return nil, err
	}
	err = l.wait(ahead)
	if trace != nil {
		stopSampling()
		now := readCPU(srv)
		fmt.Println(trace)
		fmt.Printf("  CPU from the nodes' start to the last handler's: the harness (nodes and client) %v, the server %v\n", (now.self - trace.cpu.self).Round(10*time.Millisecond), (now.server - trace.cpu.server).Round(10*time.Millisecond))
	}
	return l, err
}

// nodeLatenessRuns measures the nodes' start lateness for tasks due at
// once and c.ahead ahead.
func nodeLatenessRuns(ctx context.Context, srv *pgserver.Server, c config) error {
	for _, a := range []time.Duration{0, c.ahead} {
		l, err := nodeLateness(ctx, srv, c.rate, c.duration, a)
		if err != nil {
			return err
		}
		fmt.Printf("cluster nodes on pgdriver, %d nodes, %d tasks/s for %v, due %v ahead: %s (%s)\n", storeNodes, c.rate, c.duration, a, l, load())
	}
	return nil
}

// nodeTakeover starts a node with lease takeoverLease whose handler holds
// takeoverTasks tasks until it is stopped, stops it abruptly (StopNow:
// its tasks are left to their lease, as a crash leaves them) and returns
// how long after that an heir node started each again.
func nodeTakeover(ctx context.Context, srv *pgserver.Server) (*latencies, error) {
	db := "bench_" + strconv.FormatInt(dbSeq.Add(1), 10)
	if err := srv.CreateDatabase(db); err != nil {
		return nil, err
	}
	held := make(chan struct{}, takeoverTasks)
	dying, closeDying, err := pgNode(ctx, srv, db, "dying", nil, cluster.WithLease(takeoverLease), cluster.WithConcurrency(takeoverTasks))
	if err != nil {
		return nil, err
	}
	defer closeDying()
	if err := dying.Handle("bench", func(ctx context.Context, t cluster.Task) error {
		held <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}); err != nil {
		return nil, err
	}
	if err := dying.Start(ctx); err != nil {
		return nil, err
	}
	for i := range takeoverTasks {
		if _, err := dying.Schedule(ctx, "bench", []byte(strconv.Itoa(i)), time.Now()); err != nil {
			return nil, err
		}
	}
	for range takeoverTasks {
		<-held
	}
	var killed atomic.Int64
	l := &latencies{done: make(chan struct{}), want: takeoverTasks}
	heir, closeHeir, err := pgNode(ctx, srv, db, "heir", nil, cluster.WithLease(takeoverLease), cluster.WithConcurrency(takeoverTasks))
	if err != nil {
		return nil, err
	}
	defer closeHeir()
	if err := heir.Handle("bench", func(ctx context.Context, t cluster.Task) error {
		l.add(time.Since(time.UnixMicro(killed.Load())))
		return nil
	}); err != nil {
		return nil, err
	}
	killed.Store(time.Now().UnixMicro())
	dying.StopNow()
	if err := heir.Start(ctx); err != nil {
		return nil, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_ = heir.Stop(stopCtx)
	}()
	if err := l.wait(takeoverLease); err != nil {
		return l, errors.Join(err, fmt.Errorf("riverbench: the heir reran %d of %d", len(l.late), takeoverTasks))
	}
	return l, nil
}

// nodeTakeoverRuns measures a cluster node's takeover of a stopped
// node's running tasks.
func nodeTakeoverRuns(ctx context.Context, srv *pgserver.Server, c config) error {
	l, err := nodeTakeover(ctx, srv)
	if err != nil {
		return err
	}
	fmt.Printf("cluster node on pgdriver, takeover of %d tasks a node held when stopped abruptly, lease %v: rerun after %s (%s)\n", takeoverTasks, takeoverLease, l, load())
	return nil
}
