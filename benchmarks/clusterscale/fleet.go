package main

// The cluster nodes a pass runs: a fleet of nodes that count the runs, the
// producer node that schedules the tasks, and the payloads it stores.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// quiet drops the nodes' logs.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fleet is n started nodes, each with its own client, as n replicas of a
// service would be, all running kind "k"; trips counts the round trips of
// all their clients, scripts their script calls by script name.
type fleet struct {
	nodes   []*cluster.Node
	clients []redis.UniversalClient
	trips   *tripCounter
	scripts *tripCounter
}

func startFleet(d *deployment, n int, tally *runTally) (*fleet, error) {
	f := &fleet{trips: newTripCounter(), scripts: newTripCounter()}
	observer := cluster.Observer{
		Ended: func(_ context.Context, e cluster.RunEnd) {
			tally.ran(e.Task.ID, e.Outcome == cluster.OutcomeSucceeded, string(e.Outcome))
		},
		RedisCall: func(c cluster.RedisCall) { f.scripts.add(c.Script) },
	}
	for range n {
		c := counted(d, f.trips)
		f.clients = append(f.clients, c)
		node, err := cluster.New(c, cluster.WithLogger(quiet), cluster.WithConcurrency(*concurrency), cluster.WithObserver(observer))
		if err != nil {
			f.stop()
			return nil, err
		}
		if err := node.Handle("k", func(context.Context, cluster.Task) error { return nil }); err != nil {
			f.stop()
			return nil, err
		}
		if err := node.Start(context.Background()); err != nil {
			f.stop()
			return nil, err
		}
		f.nodes = append(f.nodes, node)
	}
	return f, nil
}

func (f *fleet) stop() {
	for _, n := range f.nodes {
		_ = n.Stop(context.Background())
	}
	for _, c := range f.clients {
		_ = c.Close()
	}
}

// producer returns a node that is not started, on a client of its own
// whose calls are not counted: it stores the tasks of a drain pass or of
// the key spread.
func producer(d *deployment) (*cluster.Node, func(), error) {
	c := d.client()
	node, err := cluster.New(c, cluster.WithLogger(quiet))
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return node, func() { node.StopNow(); _ = c.Close() }, nil
}

// payload is a task's payload: its number, padded to -payload bytes.
func payload(i int) []byte {
	p := []byte(fmt.Sprintf("%d", i))
	for len(p) < *payloadSize {
		p = append(p, '.')
	}
	return p
}

// storeAll calls store(i) for i in [0, count), sixteen at a time, and
// returns the first error.
func storeAll(count int, store func(i int) error) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	var first atomic.Value
	for range 16 {
		wg.Go(func() {
			for first.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= count {
					return
				}
				if err := store(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}
