package scheduler_test

// The clock suite's synctest driver: the system clock inside a
// testing/synctest bubble, plainly and with WithPreciseTiming(true).

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// suiteBubbleDriver runs the case in a bubble; with precise set, the
// scheduler has WithPreciseTiming(true), which must notice the bubble and
// fall back to the plain timer.
type suiteBubbleDriver struct{ precise bool }

func (d suiteBubbleDriver) name() string {
	if d.precise {
		return "synctest+precise"
	}
	return "synctest"
}

func (d suiteBubbleDriver) run(t *testing.T, body func(t *testing.T, c suiteClock)) {
	synctest.Test(t, func(t *testing.T) {
		body(t, &suiteBubbleClock{start: time.Now(), precise: d.precise})
	})
}

// suiteBubbleClock is the system clock inside a synctest bubble: time.Now is
// the bubble's fake time, and it moves only when every goroutine in the
// bubble is durably blocked.
type suiteBubbleClock struct {
	start   time.Time
	precise bool // the scheduler gets WithPreciseTiming(true)
}

func (b *suiteBubbleClock) newScheduler(t *testing.T, pool int, opts ...scheduler.Option) *scheduler.Scheduler {
	t.Helper()
	if b.precise {
		opts = append(opts, scheduler.WithPreciseTiming(true))
	}
	s, err := scheduler.New(pool, opts...) // the system clock: the bubble's
	require.NoError(t, err)
	shutdownAtEnd(t, s) // the cleanup runs inside the bubble, on its clock
	return s
}

func (b *suiteBubbleClock) elapsed() time.Duration { return time.Since(b.start) }

func (b *suiteBubbleClock) advance(t *testing.T, d time.Duration) {
	time.Sleep(d)   // virtual: the bubble's clock jumps from timer to timer
	synctest.Wait() // everything woken by the last timer is done
}

func (b *suiteBubbleClock) work(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *suiteBubbleClock) ctx(t *testing.T) context.Context { return t.Context() }
