// Package heartbeat is a small service that sends a heartbeat every 30
// seconds through a periodic task on a [scheduler.Scheduler].
//
// It is an example of code that uses the scheduler and of how to test it:
// the service does not make its own scheduler but takes one, so a test can
// hand it a scheduler on a manual clock (schedulertest.NewManualClock) or
// one created inside a testing/synctest bubble. heartbeat_test.go shows both
// recipes; the package doc of schedulertest explains them and when to pick
// which.
package heartbeat

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler"
)

// Defaults for [Config].
const (
	DefaultInterval = 30 * time.Second
	DefaultTimeout  = 10 * time.Second
)

// ErrStarted is returned by [Service.Start] on a service already started.
var ErrStarted = errors.New("heartbeat: already started")

// SendFunc sends heartbeat number seq (1, 2, ...). It must return soon
// after ctx ends: ctx carries the send timeout and is canceled by Stop.
type SendFunc func(ctx context.Context, seq uint64) error

// Config tunes a Service; the zero value means the defaults.
type Config struct {
	// Interval is the pause between the end of one heartbeat and the
	// start of the next (DefaultInterval if <= 0).
	Interval time.Duration
	// Timeout bounds one send (DefaultTimeout if <= 0).
	Timeout time.Duration
}

// Service sends heartbeats until stopped. A Service comes only from [New];
// its methods are safe for concurrent use.
//
// Heartbeats use a fixed delay, not a fixed rate: after a stall (a slow
// send, a suspended machine) the service sends one heartbeat and carries
// on, rather than a burst of catch-up heartbeats. A failed send is counted
// and logged by the scheduler, and does not stop later heartbeats.
type Service struct {
	sched    *scheduler.Scheduler
	send     SendFunc
	interval time.Duration
	timeout  time.Duration

	mu     sync.Mutex // guards future
	future scheduler.ScheduledFuture

	seq          atomic.Uint64
	sent, failed atomic.Uint64
}

// New returns a stopped Service that will send through send on s. The
// caller owns s: it shuts it down, which also stops the service.
func New(s *scheduler.Scheduler, send SendFunc, cfg Config) *Service {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Service{sched: s, send: send, interval: cfg.Interval, timeout: cfg.Timeout}
}

// Start schedules the heartbeats: the first one Interval from now, then
// each Interval after the previous one ended. It returns ErrStarted if the
// service runs already, or the scheduler's error (for example after
// shutdown).
func (h *Service) Start() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.future != nil {
		return ErrStarted
	}
	f, err := h.sched.ScheduleWithFixedDelay(h.beat, h.interval, h.interval,
		scheduler.WithName("heartbeat"), scheduler.ContinueOnError())
	if err != nil {
		return err
	}
	h.future = f
	return nil
}

// Stop cancels the heartbeats; a send in progress sees its ctx canceled.
// It does not wait for that send to return. The service may be started
// again.
func (h *Service) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.future != nil {
		h.future.Cancel(true)
		h.future = nil
	}
}

// Sent returns how many heartbeats were sent successfully.
func (h *Service) Sent() uint64 { return h.sent.Load() }

// Failed returns how many sends failed or timed out.
func (h *Service) Failed() uint64 { return h.failed.Load() }

// beat is the periodic task: one send, bounded by the timeout.
func (h *Service) beat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	if err := h.send(ctx, h.seq.Add(1)); err != nil {
		h.failed.Add(1)
		return err // logged by the scheduler; ContinueOnError keeps the beat going
	}
	h.sent.Add(1)
	return nil
}
