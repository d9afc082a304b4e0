package heartbeat_test

// These tests are written the way we recommend testing code that uses the
// scheduler: the manual-clock and synctest recipes of schedulertest's
// package doc (go doc github.com/go-stpe/scheduler/schedulertest).

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/examples/testing/heartbeat"
	"github.com/go-stpe/scheduler/schedulertest"
)

// TestMain fails the tests if a goroutine outlives them: every test shuts
// its scheduler down.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quiet keeps the scheduler's logs of failed sends out of the test output.
var quiet = scheduler.WithLogger(slog.New(slog.DiscardHandler))

// recorder is a fake sender that records when each heartbeat was sent.
type recorder struct {
	now  func() time.Time
	fail error // returned by every send if set

	mu    sync.Mutex
	times []time.Time
}

func (r *recorder) send(ctx context.Context, seq uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.times = append(r.times, r.now())
	return r.fail
}

// offsets returns the send times as offsets from start.
func (r *recorder) offsets(start time.Time) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]time.Duration, len(r.times))
	for i, at := range r.times {
		out[i] = at.Sub(start)
	}
	return out
}

func seconds(ss ...int) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s) * time.Second
	}
	return out
}

// --- Recipe 1: the manual clock ---

// newManual returns a scheduler on a manual clock, shut down at the end of
// the test.
func newManual(t *testing.T) (*scheduler.Scheduler, *schedulertest.ManualClock) {
	t.Helper()
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := scheduler.New(1, scheduler.WithClock(clk), quiet)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	})
	return s, clk
}

func TestManualClockBeatsEvery30s(t *testing.T) {
	s, clk := newManual(t)
	ctx := t.Context()
	start := clk.Now()
	rec := &recorder{now: clk.Now}
	hb := heartbeat.New(s, rec.send, heartbeat.Config{})
	require.NoError(t, hb.Start())

	// Step by step: each Advance makes one heartbeat due, and AwaitIdle
	// returns once the scheduler has sent it.
	for i := 1; i <= 4; i++ {
		clk.Advance(30 * time.Second)
		require.NoError(t, s.AwaitIdle(ctx))
		require.Equal(t, uint64(i), hb.Sent())
	}
	require.Equal(t, seconds(30, 60, 90, 120), rec.offsets(start))
}

func TestManualClockAdvanceAndSettle(t *testing.T) {
	s, clk := newManual(t)
	ctx := t.Context()
	start := clk.Now()
	rec := &recorder{now: clk.Now}
	hb := heartbeat.New(s, rec.send, heartbeat.Config{})
	require.NoError(t, hb.Start())
	// Start returns before the scheduler's worker has armed its timer:
	// let it settle so that AdvanceAndSettle sees that timer.
	require.NoError(t, s.AwaitIdle(ctx))

	// Five minutes, moved the way real time would pass: AdvanceAndSettle
	// stops at every timer and waits for the scheduler there.
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, clk, s, 5*time.Minute))
	require.Equal(t, seconds(30, 60, 90, 120, 150, 180, 210, 240, 270, 300), rec.offsets(start))
}

func TestManualClockOneBigAdvanceSendsOnce(t *testing.T) {
	// The limit of a single jump: the scheduler wakes once Advance has
	// returned, so a fixed-delay task sees only the end of the jump and
	// runs once (a fixed-rate task would run 10 times back to back).
	s, clk := newManual(t)
	start := clk.Now()
	rec := &recorder{now: clk.Now}
	hb := heartbeat.New(s, rec.send, heartbeat.Config{})
	require.NoError(t, hb.Start())

	clk.Advance(5 * time.Minute)
	require.NoError(t, s.AwaitIdle(t.Context()))
	require.Equal(t, seconds(300), rec.offsets(start))
}

func TestManualClockFailedSendsDoNotStopTheBeat(t *testing.T) {
	s, clk := newManual(t)
	rec := &recorder{now: clk.Now, fail: errors.New("connection refused")}
	hb := heartbeat.New(s, rec.send, heartbeat.Config{})
	require.NoError(t, hb.Start())

	for range 3 {
		clk.Advance(30 * time.Second)
		require.NoError(t, s.AwaitIdle(t.Context()))
	}
	require.Equal(t, uint64(3), hb.Failed())
	require.Zero(t, hb.Sent())
}

func TestManualClockStop(t *testing.T) {
	s, clk := newManual(t)
	ctx := t.Context()
	rec := &recorder{now: clk.Now}
	hb := heartbeat.New(s, rec.send, heartbeat.Config{})
	require.NoError(t, hb.Start())
	require.ErrorIs(t, hb.Start(), heartbeat.ErrStarted)

	clk.Advance(30 * time.Second)
	require.NoError(t, s.AwaitIdle(ctx))
	hb.Stop()
	clk.Advance(time.Hour)
	require.NoError(t, s.AwaitIdle(ctx))
	require.Equal(t, uint64(1), hb.Sent())

	require.NoError(t, hb.Start(), "a stopped service starts again")
	clk.Advance(30 * time.Second)
	require.NoError(t, s.AwaitIdle(ctx))
	require.Equal(t, uint64(2), hb.Sent())
}

// --- Recipe 2: a synctest bubble ---

// newInBubble returns a scheduler on the default clock. Called inside
// synctest.Test, the scheduler runs on the bubble's fake time.
func newInBubble(t *testing.T) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(1, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { // runs inside the bubble
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	})
	return s
}

func TestSynctestBeatsEvery30s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newInBubble(t)
		start := time.Now()
		rec := &recorder{now: time.Now}
		hb := heartbeat.New(s, rec.send, heartbeat.Config{})
		require.NoError(t, hb.Start())

		time.Sleep(5 * time.Minute) // virtual: returns at once
		synctest.Wait()             // and what came due at 5m is done
		require.Equal(t, seconds(30, 60, 90, 120, 150, 180, 210, 240, 270, 300), rec.offsets(start))
	})
}

func TestSynctestSlowSenderTimesOut(t *testing.T) {
	// Only the bubble can test this: the send timeout is a
	// context.WithTimeout inside the service, which a manual clock does not
	// control.
	synctest.Test(t, func(t *testing.T) {
		s := newInBubble(t)
		start := time.Now()
		var mu sync.Mutex
		var attempts []time.Duration
		hang := func(ctx context.Context, seq uint64) error {
			mu.Lock()
			attempts = append(attempts, time.Since(start))
			mu.Unlock()
			<-ctx.Done() // a peer that never answers
			return ctx.Err()
		}
		hb := heartbeat.New(s, hang, heartbeat.Config{})
		require.NoError(t, hb.Start())

		time.Sleep(2 * time.Minute)
		synctest.Wait()
		// Each attempt gives up after 10s; the next starts 30s later.
		require.Equal(t, uint64(3), hb.Failed())
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, seconds(30, 70, 110), attempts)
	})
}

func TestSynctestStopInterruptsASend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newInBubble(t)
		var sendErr error
		done := make(chan struct{})
		hang := func(ctx context.Context, seq uint64) error {
			<-ctx.Done()
			sendErr = ctx.Err()
			close(done)
			return ctx.Err()
		}
		hb := heartbeat.New(s, hang, heartbeat.Config{})
		require.NoError(t, hb.Start())

		time.Sleep(35 * time.Second) // the first send hangs since 30s
		hb.Stop()
		<-done
		require.ErrorIs(t, sendErr, context.Canceled, "canceled by Stop, not timed out")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, uint64(1), hb.Failed(), "no heartbeat after Stop")
	})
}
