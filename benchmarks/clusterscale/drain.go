package main

// The drain pass of the cluster module: tasks per second of a backlog all
// due now (asynq's is in asynq.go).

import (
	"context"
	"time"
)

// drainResult is one drain pass.
type drainResult struct {
	redis      string
	system     string
	nodes      int
	rate       float64 // tasks per second, from the first node's start to the last run
	d          delta   // from the first start to the fleet's stop
	t          trips
	duplicates int64
}

// drainModule stores -drain tasks due a second ago, then starts n nodes
// and measures until every task ran.
func drainModule(d *deployment, n int) (drainResult, error) {
	ctx := context.Background()
	count := *drainCount
	r := drainResult{redis: d.name, system: "cluster module", nodes: n}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return r, err
	}
	p, stopProducer, err := producer(d)
	if err != nil {
		return r, err
	}
	defer stopProducer()
	past := time.Now().Add(-time.Second)
	if err := storeAll(count, func(i int) error {
		_, err := p.Schedule(ctx, "k", payload(i), past)
		return err
	}); err != nil {
		return r, err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return r, err
	}
	before, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	tally := newRunTally(count)
	start := time.Now()
	f, err := startFleet(d, n, tally)
	if err != nil {
		return r, err
	}
	err = tally.wait(5 * time.Minute)
	r.rate = float64(count) / time.Since(start).Seconds()
	f.stop()
	if err != nil {
		return r, err
	}
	after, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.d = diff(before, after)
	r.t = tripsBetween(nil, f.trips.snapshot())
	r.duplicates = tally.duplicates()
	return r, nil
}
