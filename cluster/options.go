package cluster

import (
	"log/slog"
	"time"

	"github.com/go-stpe/scheduler"
)

// Options: how a Node, each registered kind and each Schedule call are
// configured. They are plain values in the root package's style: an
// interface with an unexported method, built by the With functions. A nil
// option is an error wrapping scheduler.ErrInvalidArgument.

// Option configures a Node at New.
type Option interface{ apply(*config) }

// HandleOption configures one kind at Node.Handle or one periodic task at
// Node.Periodic.
type HandleOption interface{ applyHandle(*handleConfig) }

// ScheduleOption configures one Node.Schedule call.
type ScheduleOption interface{ applySchedule(*scheduleConfig) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type scheduleOptionFunc func(*scheduleConfig)

func (f scheduleOptionFunc) applySchedule(s *scheduleConfig) { f(s) }

// config holds every setting of a Node; defaults come from defaultConfig.
type config struct {
	prefix      string
	partitions  int // WithPartitions
	clock       scheduler.Clock
	concurrency int
	window      time.Duration
	sweep       time.Duration
	lease       time.Duration
	maxRetries  int
	maxLost     int
	backoff     func(attempt int) time.Duration
	maxPayload  int
	retention   time.Duration
	timeline    time.Duration // WithTimelineRetention; 0: not recorded
	loadLimit   int
	backupDelay time.Duration
	taskTimeout time.Duration // 0: no limit
	logger      *slog.Logger
	strictKinds bool // Schedule refuses a kind this node does not handle
	observer    Observer
	keepDone    keepDone
	// replicaAcks replicas must acknowledge a Schedule or Cancel within
	// replicaTimeout (WithReplicaAcks); 0 waits for none.
	replicaAcks    int
	replicaTimeout time.Duration
	// strictPriority serves the kinds strictly by weight (priority.go).
	strictPriority bool
	// unhandledEvery is how often at most a kind no live node handles
	// is logged (unhandled.go).
	unhandledEvery time.Duration
	// prefixSet, partitionsSet and replicaAcksSet say that WithPrefix,
	// WithPartitions and WithReplicaAcks were given: settings of the
	// Redis driver, which NewWithDriver refuses or checks.
	prefixSet, partitionsSet, replicaAcksSet bool
}

// handleConfig holds the settings of one kind.
type handleConfig struct {
	timeout   time.Duration // 0: the node's WithTaskTimeout
	limit     int           // WithKindConcurrency
	limitSet  bool
	weight    int // WithKindPriority
	weightSet bool
	periodic  periodicConfig // WithMisfire, WithOverlap: Periodic only
}

// scheduleConfig holds the settings of one Schedule call.
type scheduleConfig struct {
	id         string
	maxRetries int
}

// DefaultMaxLostRuns is how many runs of one task may be lost to faults
// (the lease expired because its node died, stalled or lost Redis, or its
// outcome could not be written) before the task is kept as dead.
const DefaultMaxLostRuns = 25

func defaultConfig() config {
	return config{
		prefix:      DefaultPrefix,
		partitions:  DefaultPartitions,
		clock:       scheduler.SystemClock(),
		concurrency: 16,
		window:      time.Minute,
		sweep:       10 * time.Second,
		lease:       30 * time.Second,
		maxRetries:  3,
		maxLost:     DefaultMaxLostRuns,
		backoff:     DefaultBackoff,
		maxPayload:  1 << 20,
		retention:   24 * time.Hour,
		timeline:    DefaultTimelineRetention,
		loadLimit:   10000,
		backupDelay: 100 * time.Millisecond,
		logger:      slog.Default(),

		unhandledEvery: 5 * time.Minute,
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
	if err := validatePartitions(c.partitions); err != nil {
		return err
	}
	switch {
	case c.prefix == "":
		return invalid("New", "empty key prefix")
	case c.clock == nil:
		return invalid("New", "nil clock")
	case c.logger == nil:
		return invalid("New", "nil logger")
	case c.backoff == nil:
		return invalid("New", "nil backoff")
	case c.concurrency < 1:
		return invalid("New", "concurrency %d < 1", c.concurrency)
	case c.lease <= 0:
		return invalid("New", "lease %v <= 0", c.lease)
	case c.window <= 0 || c.sweep <= 0:
		return invalid("New", "window %v and sweep interval %v must be > 0", c.window, c.sweep)
	case c.sweep >= c.window:
		return invalid("New", "sweep interval %v must be shorter than the window %v", c.sweep, c.window)
	case c.maxRetries < 0:
		return invalid("New", "max retries %d < 0", c.maxRetries)
	case c.maxLost < 1:
		return invalid("New", "max lost runs %d < 1", c.maxLost)
	case c.maxPayload < 0:
		return invalid("New", "max payload %d < 0", c.maxPayload)
	case c.retention <= 0:
		return invalid("New", "retention %v <= 0", c.retention)
	case c.timeline < 0:
		return invalid("New", "timeline retention %v < 0", c.timeline)
	case c.loadLimit < 1:
		return invalid("New", "load limit %d < 1", c.loadLimit)
	case c.backupDelay < 0:
		return invalid("New", "backup delay %v < 0", c.backupDelay)
	case c.taskTimeout < 0:
		return invalid("New", "task timeout %v < 0", c.taskTimeout)
	case c.unhandledEvery <= 0:
		return invalid("New", "unhandled kind warning interval %v <= 0", c.unhandledEvery)
	}
	return c.keepDone.validate()
}

// DefaultPrefix is the prefix of every Redis key of a node made without
// WithPrefix.
const DefaultPrefix = "{scheduler}"

// WithPrefix sets the prefix of every Redis key (default DefaultPrefix,
// "{scheduler}").
// Keep a hash tag ({...}) in it: the scripts touch several keys at once, and
// the tag keeps them in one slot of a Redis Cluster. Nodes sharing a prefix
// share their tasks. It is a setting of New's Redis driver: NewWithDriver
// refuses it.
func WithPrefix(p string) Option {
	return optionFunc(func(c *config) { c.prefix, c.prefixSet = p, true })
}

// WithClock sets the node's clock (default the system clock). The node
// measures how far it is from Redis's clock at every membership renewal
// (every quarter lease) and loads its window and first tries to claim a
// task by the corrected reading. It never decides whether a task is due:
// the claim checks that on Redis's clock (TIME), so even a node whose
// offset was misread never starts a task early; it only tries again when
// Redis's clock gets there. Leases run on Redis's clock too. Tests pass a
// skewed clock to play a replica whose clock is off; nil is an error.
func WithClock(clk scheduler.Clock) Option {
	return optionFunc(func(c *config) { c.clock = clk })
}

// WithConcurrency sets how many tasks the node claims and runs at once
// (default 16; asynq's Concurrency, Quartz's threadCount): its workers. A
// node claims a task only when a worker is free for it; when tasks of
// several kinds wait, WithKindPriority decides which goes first, and
// WithKindConcurrency caps a kind. A worker is free again when its
// handler returns: the run's outcome is written meanwhile, in the
// background (Stop waits for it), so that a busy node starts a task per
// claim's round trip, not per claim's and completion's. Its
// scheduler.Scheduler has one worker more, which moves the tasks that
// fall due to their kinds' ready queues.
// Give the Redis client a PoolSize above it (go-redis's default is 10 per
// CPU), so that the heartbeat never queues for a connection behind claims
// and handlers; New logs a warning otherwise.
func WithConcurrency(n int) Option { return optionFunc(func(c *config) { c.concurrency = n }) }

// WithWindow sets how far ahead the node loads tasks into memory (default
// 1 min), and WithSweepInterval how often it re-reads the store as the
// safety net behind pub/sub (default 10 s, shorter than the window).
func WithWindow(d time.Duration) Option { return optionFunc(func(c *config) { c.window = d }) }

// WithSweepInterval: see WithWindow.
func WithSweepInterval(d time.Duration) Option { return optionFunc(func(c *config) { c.sweep = d }) }

// WithLease sets how long a claim holds a task without a renewal (default
// 30 s; asynq's lease is 30 s too, ShedLock's is lockAtMostFor). A running
// task's lease is renewed every quarter of it; a dead replica's tasks run
// elsewhere at most about a lease and a quarter after it died. Every Redis
// call on the lease path carries a deadline inside the lease, whatever the
// client's own timeouts (see the package documentation).
func WithLease(d time.Duration) Option { return optionFunc(func(c *config) { c.lease = d }) }

// WithMaxRetries sets the default number of retries after a failed run
// (default 3); past it the task is dead, kept with its last error. A run
// lost to a fault does not count here (see WithMaxLostRuns).
func WithMaxRetries(n int) Option { return optionFunc(func(c *config) { c.maxRetries = n }) }

// WithMaxLostRuns sets how many runs of one task may be lost to faults
// before it is kept as dead (default DefaultMaxLostRuns): runs whose lease
// expired because their node died, stalled or lost Redis, or whose outcome
// could not be written. They do not use up the handler's retries, so a
// task whose handler keeps succeeding does not go dead because Redis was
// restarted a few times.
func WithMaxLostRuns(n int) Option { return optionFunc(func(c *config) { c.maxLost = n }) }

// WithBackoff sets the delay before the retry that follows the attempt-th
// failed run (default DefaultBackoff); nil is an error. The retry's due
// time is Redis's clock plus the delay.
func WithBackoff(f func(attempt int) time.Duration) Option {
	return optionFunc(func(c *config) { c.backoff = f })
}

// WithMaxPayload sets the largest payload Schedule accepts, in bytes
// (default 1 MiB).
func WithMaxPayload(n int) Option { return optionFunc(func(c *config) { c.maxPayload = n }) }

// WithRetention sets how long the ID of a task the caller named (WithID, and
// every periodic occurrence) is remembered after the task ran, so that
// scheduling it again does not run it again (default 24 h). It must exceed
// the clock skew between replicas and the window by far.
func WithRetention(d time.Duration) Option { return optionFunc(func(c *config) { c.retention = d }) }

// DefaultTimelineRetention is how long the per-minute timeline of runs
// (Node.Timeline) is kept without WithTimelineRetention.
const DefaultTimelineRetention = 24 * time.Hour

// WithTimelineRetention sets how long the per-kind, per-minute counts of
// runs, failures, lost runs, start lateness and pending depth that
// Node.Timeline reads are kept in Redis (default
// DefaultTimelineRetention, 24 hours); 0 turns the recording off for this
// node (Timeline still reads what other nodes record). asynqmon's charts
// read the same counts from asynq's daily stats keys.
func WithTimelineRetention(d time.Duration) Option {
	return optionFunc(func(c *config) { c.timeline = d })
}

// WithLoadLimit sets how many tasks one sweep loads at most (default 10000);
// a node with a larger backlog loads the rest as it works through it.
func WithLoadLimit(n int) Option { return optionFunc(func(c *config) { c.loadLimit = n }) }

// WithBackupDelay sets how long after a task's due time the nodes other
// than its preferred one try to claim it (default 100 ms): the start
// lateness of a task whose preferred node is busy, gone or does not handle
// its kind. 0 makes every node claim every task at its due time.
func WithBackupDelay(d time.Duration) Option {
	return optionFunc(func(c *config) { c.backupDelay = d })
}

// WithLogger sets where the node reports Redis errors and dead tasks
// (default slog.Default()); nil is an error.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.logger = l }) }

// TimeoutOption is the option WithTaskTimeout returns: an Option for New
// (the node's default) and a HandleOption for Handle and Periodic (one
// kind's limit, which wins over the node's).
type TimeoutOption struct{ d time.Duration }

// WithTaskTimeout limits how long a handler may run (default: no limit;
// asynq's Timeout, River's JobTimeout). When the limit passes, the
// handler's ctx is canceled with a cause wrapping ErrTaskTimeout. If the
// handler returns within a grace of a tenth of the lease, its run counts
// as a failed attempt with the timeout error (a nil return completes the
// task: the work was done). If it has not returned by then, the node stops
// renewing the lease and records the failed attempt itself, so another run
// can follow after the backoff; the handler's own result is ignored when it
// finally returns. A Go function cannot be stopped from outside, so the
// worker it holds stays busy until it returns. A negative limit is an
// error; 0 means no limit.
func WithTaskTimeout(d time.Duration) TimeoutOption { return TimeoutOption{d} }

func (o TimeoutOption) apply(c *config)             { c.taskTimeout = o.d }
func (o TimeoutOption) applyHandle(h *handleConfig) { h.timeout = o.d }

// WithID fixes the task's ID, for idempotency (asynq's TaskID, River's
// unique jobs, Quartz's JobKey): scheduling the same kind, payload and due
// time under an ID already stored, or run within the retention, stores
// nothing and returns nil; a different task under it fails with
// ErrIDConflict. Without it the ID is random.
func WithID(id string) ScheduleOption {
	return scheduleOptionFunc(func(s *scheduleConfig) { s.id = id })
}

// WithTaskMaxRetries overrides the node's WithMaxRetries for one task.
func WithTaskMaxRetries(n int) ScheduleOption {
	return scheduleOptionFunc(func(s *scheduleConfig) { s.maxRetries = n })
}
