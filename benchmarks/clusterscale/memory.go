package main

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// windowMemory measures what a node's window costs its process per task:
// count tasks due in 45 s are stored first, then one node is started; its
// Start loads them all into its window (count stays under the default
// load limit). The Go heap in use after a collection, before the start and
// once the window holds the tasks, gives the bytes per windowed task (the
// node's fixed structures included, a small share at 10,000 tasks).
func windowMemory(d *deployment, count int) (bytesPerTask float64, held int, err error) {
	ctx := context.Background()
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return 0, 0, err
	}
	p, stopProducer, err := producer(d)
	if err != nil {
		return 0, 0, err
	}
	due := time.Now().Add(45 * time.Second)
	err = storeAll(count, func(i int) error {
		_, err := p.Schedule(ctx, "k", payload(i), due)
		return err
	})
	stopProducer()
	if err != nil {
		return 0, 0, err
	}
	before := heapInUse()
	f, err := startFleet(d, 1, newRunTally(count))
	if err != nil {
		return 0, 0, err
	}
	defer f.stop()
	// Start loads at most the load limit, shared over the partitions, so
	// a window may stop a little short of count until a sweep tops it up:
	// the bytes are per task the window holds.
	deadline := time.Now().Add(15 * time.Second)
	for f.nodes[0].Stats().Windowed < count && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	held = f.nodes[0].Stats().Windowed
	if held < count/2 {
		return 0, 0, fmt.Errorf("after 15 s the window holds %d of %d tasks", held, count)
	}
	return float64(heapInUse()-before) / float64(held), held, nil
}

// heapInUse is the Go heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
