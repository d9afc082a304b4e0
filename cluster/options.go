package cluster

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/go-stpe/scheduler"
)

// Option configures a Node at New.
type Option func(*config)

// config holds every setting of a Node; defaults come from defaultConfig.
type config struct {
	prefix      string
	clock       scheduler.Clock
	concurrency int
	window      time.Duration
	sweep       time.Duration
	lease       time.Duration
	maxRetries  int
	backoff     func(attempt int) time.Duration
	maxPayload  int
	retention   time.Duration
	loadLimit   int
	backupDelay time.Duration
	logger      *slog.Logger
}

func defaultConfig() config {
	return config{
		prefix:      "{scheduler}",
		clock:       scheduler.SystemClock(),
		concurrency: 16,
		window:      time.Minute,
		sweep:       10 * time.Second,
		lease:       30 * time.Second,
		maxRetries:  3,
		backoff:     DefaultBackoff,
		maxPayload:  1 << 20,
		retention:   24 * time.Hour,
		loadLimit:   10000,
		backupDelay: 100 * time.Millisecond,
		logger:      slog.Default(),
	}
}

// DefaultBackoff is the retry delay after the attempt-th failed run: 1 s,
// 2 s, 4 s ... doubling up to 1 h (asynq's default grows as n^4; Quartz and
// ShedLock do not retry).
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 13 {
		return time.Hour
	}
	return min(time.Second<<(attempt-1), time.Hour)
}

func (c *config) validate() error {
	switch {
	case c.prefix == "":
		return invalid("empty key prefix")
	case c.concurrency < 1:
		return invalid("concurrency %d < 1", c.concurrency)
	case c.lease <= 0:
		return invalid("lease %v <= 0", c.lease)
	case c.window <= 0 || c.sweep <= 0:
		return invalid("window %v and sweep interval %v must be > 0", c.window, c.sweep)
	case c.sweep >= c.window:
		return invalid("sweep interval %v must be shorter than the window %v", c.sweep, c.window)
	case c.maxRetries < 0:
		return invalid("max retries %d < 0", c.maxRetries)
	case c.maxPayload < 0:
		return invalid("max payload %d < 0", c.maxPayload)
	case c.retention <= 0:
		return invalid("retention %v <= 0", c.retention)
	case c.loadLimit < 1:
		return invalid("load limit %d < 1", c.loadLimit)
	case c.backupDelay < 0:
		return invalid("backup delay %v < 0", c.backupDelay)
	}
	return nil
}

// WithPrefix sets the prefix of every Redis key (default "{scheduler}").
// Keep a hash tag ({...}) in it: the scripts touch several keys at once, and
// the tag keeps them in one slot of a Redis Cluster. Nodes sharing a prefix
// share their tasks.
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithClock sets the node's clock (default the system clock): due times are
// read and waited for on it. Tests pass a skewed clock to play a replica
// whose clock is off. Leases never depend on it: they run on Redis's clock.
func WithClock(clk scheduler.Clock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// WithConcurrency sets how many tasks the node runs at once (default 16):
// the pool size of its scheduler.Scheduler (asynq's Concurrency, Quartz's
// threadCount). A node claims a task only when a worker is free for it.
// Give the Redis client a PoolSize above it (go-redis's default is 10 per
// CPU), so that the heartbeat never queues for a connection behind claims
// and handlers; New logs a warning otherwise.
func WithConcurrency(n int) Option { return func(c *config) { c.concurrency = n } }

// WithWindow sets how far ahead the node loads tasks into memory (default
// 1 min), and WithSweepInterval how often it re-reads the store as the
// safety net behind pub/sub (default 10 s, shorter than the window).
func WithWindow(d time.Duration) Option { return func(c *config) { c.window = d } }

// WithSweepInterval: see WithWindow.
func WithSweepInterval(d time.Duration) Option { return func(c *config) { c.sweep = d } }

// WithLease sets how long a claim holds a task without a heartbeat (default
// 30 s; asynq's lease is 30 s too, ShedLock's is lockAtMostFor). A running
// task's lease is renewed every third of it; a dead replica's tasks run
// elsewhere at most about a lease and a quarter after it died.
func WithLease(d time.Duration) Option { return func(c *config) { c.lease = d } }

// WithMaxRetries sets the default number of retries after a failed run
// (default 3); past it the task is dead, kept with its last error.
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = n } }

// WithBackoff sets the delay before the retry that follows the attempt-th
// failed run (default DefaultBackoff). nil means the default.
func WithBackoff(f func(attempt int) time.Duration) Option {
	return func(c *config) {
		if f != nil {
			c.backoff = f
		}
	}
}

// WithMaxPayload sets the largest payload Schedule accepts, in bytes
// (default 1 MiB).
func WithMaxPayload(n int) Option { return func(c *config) { c.maxPayload = n } }

// WithRetention sets how long the ID of a task the caller named (WithID, and
// every periodic occurrence) is remembered after the task ran, so that
// scheduling it again does not run it again (default 24 h). It must exceed
// the clock skew between replicas and the window by far.
func WithRetention(d time.Duration) Option { return func(c *config) { c.retention = d } }

// WithLoadLimit sets how many tasks one sweep loads at most (default 10000);
// a node with a larger backlog loads the rest as it works through it.
func WithLoadLimit(n int) Option { return func(c *config) { c.loadLimit = n } }

// WithBackupDelay sets how long after a task's due time the nodes other
// than its preferred one try to claim it (default 100 ms): the start
// lateness of a task whose preferred node is busy, gone or does not handle
// its kind. 0 makes every node claim every task at its due time.
func WithBackupDelay(d time.Duration) Option { return func(c *config) { c.backupDelay = d } }

// WithLogger sets where the node reports Redis errors and dead tasks
// (default slog.Default()). nil means the default.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// ScheduleOption configures one Node.Schedule call.
type ScheduleOption func(*scheduleConfig)

type scheduleConfig struct {
	id         string
	maxRetries int
}

// WithID fixes the task's ID, for idempotency (asynq's TaskID, River's
// unique jobs, Quartz's JobKey): scheduling the same kind, payload and due
// time under an ID already stored, or run within the retention, stores
// nothing and returns nil; a different task under it fails with
// ErrIDConflict. Without it the ID is random.
func WithID(id string) ScheduleOption { return func(s *scheduleConfig) { s.id = id } }

// WithTaskMaxRetries overrides the node's WithMaxRetries for one task.
func WithTaskMaxRetries(n int) ScheduleOption {
	return func(s *scheduleConfig) { s.maxRetries = n }
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("cluster: %w: "+format, append([]any{scheduler.ErrInvalidArgument}, args...)...)
}
