package main

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// rttProbe measures Redis round trips (PING) every 5 ms while a pass runs:
// the second term of the target's "in-memory scheduler plus one Redis round trip".
type rttProbe struct {
	stop chan struct{}
	done sync.WaitGroup
	rtt  []time.Duration // written by the probe goroutine until done
}

func startRTTProbe(addr string) *rttProbe {
	p := &rttProbe{stop: make(chan struct{})}
	c := redis.NewClient(&redis.Options{Addr: addr})
	p.done.Go(func() {
		defer c.Close()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			t0 := time.Now()
			if c.Ping(context.Background()).Err() == nil {
				p.rtt = append(p.rtt, time.Since(t0))
			}
		}
	})
	return p
}

// end stops the probe and returns its samples.
func (p *rttProbe) end() []time.Duration {
	close(p.stop)
	p.done.Wait()
	return p.rtt
}
