package cluster

import (
	"context"
	"time"
)

// every calls fn every period, and at once on each value from kick (nil
// for none), until ctx ends. The background loops of a node (sweep,
// heartbeat, reaper) are this.
func every(ctx context.Context, period time.Duration, kick <-chan struct{}, fn func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		fn()
	}
}
