package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// What the clients count: every round trip a client makes to a Redis
// server, and every run that ended. The round trips are counted by a
// go-redis hook on each server's connection pool (on a cluster client,
// installed on every node client it makes, so that a pipeline split over
// three masters counts three round trips and a MOVED redirect counts the
// retry): one per command sent alone, one per pipeline sent to one server.
// The subscriptions' connections are not counted (their messages are
// deliveries, counted apart).

// tripCounter is a go-redis hook that counts round trips by command name
// ("pipeline" for a pipeline, "multi" for a transaction).
type tripCounter struct {
	mu     sync.Mutex // guards byName
	byName map[string]int64
}

func newTripCounter() *tripCounter { return &tripCounter{byName: map[string]int64{}} }

func (t *tripCounter) add(name string) {
	t.mu.Lock()
	t.byName[name]++
	t.mu.Unlock()
}

func (t *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (t *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		t.add(strings.ToLower(cmd.Name()))
		return next(ctx, cmd)
	}
}

func (t *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && strings.EqualFold(cmds[0].Name(), "multi") {
			t.add("multi")
		} else {
			t.add("pipeline")
		}
		return next(ctx, cmds)
	}
}

// snapshot returns a copy of the counts so far.
func (t *tripCounter) snapshot() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[string]int64, len(t.byName))
	for k, v := range t.byName {
		m[k] = v
	}
	return m
}

// trips is what a tripCounter counted between two snapshots.
type trips struct {
	total     int64
	scripts   int64 // EVALSHA and EVAL
	byCommand map[string]int64
}

func tripsBetween(a, b map[string]int64) trips {
	t := trips{byCommand: map[string]int64{}}
	for name, k := range b {
		if k -= a[name]; k == 0 {
			continue
		}
		t.byCommand[name] = k
		t.total += k
		if name == "evalsha" || name == "eval" {
			t.scripts += k
		}
	}
	return t
}

// counted returns a client of d whose round trips t counts.
func counted(d *deployment, t *tripCounter) redis.UniversalClient {
	if d.cluster {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: d.addrs(), PoolSize: 32})
		c.OnNewNode(func(node *redis.Client) { node.AddHook(t) })
		return c
	}
	c := redis.NewClient(&redis.Options{Addr: d.servers[0].addr, PoolSize: 32})
	c.AddHook(t)
	return c
}

// runTally counts the runs of a pass by task: a task that ran twice shows
// up as a duplicate. all is closed when want distinct tasks ran.
type runTally struct {
	want int
	all  chan struct{}

	mu       sync.Mutex // guards byTask, failures and closed
	byTask   map[string]int
	failures []string
	closed   bool

	ended atomic.Int64 // runs ended, duplicates included
}

func newRunTally(want int) *runTally {
	return &runTally{want: want, all: make(chan struct{}), byTask: make(map[string]int, want)}
}

// ran records one run of task id; ok is false for a run that did not
// succeed (it is reported, and the pass fails).
func (r *runTally) ran(id string, ok bool, why string) {
	r.ended.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.failures = append(r.failures, id+": "+why)
	}
	r.byTask[id]++
	if !r.closed && len(r.byTask) >= r.want {
		r.closed = true
		close(r.all)
	}
}

// wait waits until every task ran once, or fails after timeout.
func (r *runTally) wait(timeout time.Duration) error {
	select {
	case <-r.all:
	case <-time.After(timeout):
		r.mu.Lock()
		defer r.mu.Unlock()
		return fmt.Errorf("after %v, %d of %d tasks ran", timeout, len(r.byTask), r.want)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failures) > 0 {
		sort.Strings(r.failures)
		return fmt.Errorf("%d runs did not succeed, the first: %s", len(r.failures), r.failures[0])
	}
	return nil
}

// duplicates counts the runs beyond the first of each task.
func (r *runTally) duplicates() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended.Load() - int64(len(r.byTask))
}
