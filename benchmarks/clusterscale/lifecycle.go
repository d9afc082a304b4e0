package main

// The lifecycle pass: per task scheduled, claimed and completed, what Redis
// did, how many round trips the nodes made, and how the near-due tasks
// spread over the nodes' windows.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lifecycleResult is one lifecycle pass.
type lifecycleResult struct {
	redis      string
	nodes      int
	d          delta
	t          trips
	scripts    trips   // script calls by script name (Observer.RedisCall)
	subs       float64 // mean subscribers per channel
	channels   int
	share      float64 // of the near-due tasks, the fullest node's window: mean over samples
	peakShare  float64 // and the highest sample
	idle       delta   // the fleet's background work over idleTime, before the tasks
	idleTrips  trips
	idleTime   time.Duration
	duplicates int64
}

// lifecycle starts n nodes, measures their background work while idle,
// then stores -tasks tasks due evenly over -spread starting 2 s later,
// through the nodes in turn, and measures what Redis did from before the
// first Schedule to the last task's completion.
func lifecycle(d *deployment, n int) (lifecycleResult, error) {
	ctx := context.Background()
	count := *taskCount
	r := lifecycleResult{redis: d.name, nodes: n}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return r, err
	}
	tally := newRunTally(count)
	f, err := startFleet(d, n, tally)
	if err != nil {
		return r, err
	}
	defer f.stop()
	ms, err := masters(ctx, admin)
	if err != nil {
		return r, err
	}

	// The nodes' background work (heartbeats, sweeps, renewals) with no
	// task: what a node costs whatever the load.
	idleStart, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	idleTrips := f.trips.snapshot()
	began := time.Now()
	time.Sleep(*idle)
	idleEnd, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.idleTime = time.Since(began)
	r.idle = diff(idleStart, idleEnd)
	r.idleTrips = tripsBetween(idleTrips, f.trips.snapshot())

	subs, err := channelSubscribers(ctx, admin)
	if err != nil {
		return r, err
	}
	r.subs, r.channels = meanSubscribers(subs), len(subs)

	before, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	tripsBefore, scriptsBefore := f.trips.snapshot(), f.scripts.snapshot()

	var stored atomic.Int64
	stopSampling := make(chan struct{})
	var sampled sync.WaitGroup
	var shareSum, samples float64
	sampled.Go(func() {
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
			inStore := stored.Load() - tally.ended.Load()
			if inStore < int64(max(100, count/20)) {
				continue
			}
			fullest := 0.0
			for _, node := range f.nodes {
				fullest = max(fullest, float64(node.Stats().Windowed)/float64(inStore))
			}
			fullest = min(fullest, 1)
			shareSum += fullest
			samples++
			r.peakShare = max(r.peakShare, fullest)
		}
	})
	first := time.Now().Add(2 * time.Second)
	step := *spread / time.Duration(count)
	err = storeAll(count, func(i int) error {
		_, err := f.nodes[i%n].Schedule(ctx, "k", payload(i), first.Add(time.Duration(i)*step))
		if err == nil {
			stored.Add(1)
		}
		return err
	})
	if err == nil {
		err = tally.wait(*spread + 2*time.Minute)
	}
	close(stopSampling)
	sampled.Wait()
	if err != nil {
		return r, err
	}
	after, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.d = diff(before, after)
	r.t = tripsBetween(tripsBefore, f.trips.snapshot())
	r.scripts = tripsBetween(scriptsBefore, f.scripts.snapshot())
	if samples > 0 {
		r.share = shareSum / samples
	}
	r.duplicates = tally.duplicates()
	return r, nil
}
