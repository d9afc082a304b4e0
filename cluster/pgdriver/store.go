package pgdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The store: the tasks' lifecycle as SQL statements on a pool. Each
// change of state is one statement (or one transaction), so no node ever
// sees a half-made change, and every time that decides something (whether
// a task is due, lease expiries, retry times, the stamps) is the
// database's statement_timestamp(), never a node's clock. Due times come
// from the caller, as with the Redis store.

// DefaultPartitions is the number of partitions of a Store made without
// Options.Partitions, as in the cluster package.
const DefaultPartitions = 64

// maxIDLen is the longest task ID accepted, in bytes, as in the cluster
// package.
const maxIDLen = 512

// Store runs the tasks' lifecycle on a PostgreSQL database migrated by
// Migrate. It is safe for concurrent use.
type Store struct {
	pool        *pgxpool.Pool
	node        string // Options.Node
	partitions  int
	partitionOf func(id string, n int) int
	purgeEvery  time.Duration                     // Options.PurgeEvery, DefaultPurgeEvery if 0
	schedules   *batcher[Task, scheduleGot]       // Schedule's calls, combined while one is in flight
	claims      *batcher[claimAsk, claimGot]      // Claim's calls, likewise
	completes   *batcher[completeAsk, Outcome]    // Complete's calls, likewise
	occurrences *batcher[occurrenceAsk, claimGot] // ClaimOccurrence's calls, likewise
}

// Options configure New.
type Options struct {
	// Partitions is the number of partitions the tasks are spread over,
	// each with its own notice channel (DefaultPartitions if 0).
	Partitions int
	// PartitionOf maps a task ID to its partition in [0, n):
	// driver.PartitionOf, the rule of every driver, if nil.
	PartitionOf func(id string, n int) int
	// Node names the node this store serves, as its claims record it
	// (StoredTask.ClaimedBy, the run history's RunRecord.Node).
	Node string
	// PurgeEvery is the least time between two purges of what expired
	// (Driver.Expired, which the reaper of every started node calls):
	// DefaultPurgeEvery if 0; a negative value turns the driver's purge
	// off, and the program then calls Store.PurgeExpired itself.
	PurgeEvery time.Duration
}

// New returns the Store of pool. A negative number of partitions is an
// error wrapping scheduler.ErrInvalidArgument.
func New(pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, invalid("postgres store", "nil pool")
	}
	n := opts.Partitions
	if n == 0 {
		n = DefaultPartitions
	}
	if n < 0 {
		return nil, invalid("postgres store", "%d partitions", n)
	}
	of := opts.PartitionOf
	if of == nil {
		of = driver.PartitionOf
	}
	every := opts.PurgeEvery
	if every == 0 {
		every = DefaultPurgeEvery
	}
	s := &Store{pool: pool, node: opts.Node, partitions: n, partitionOf: of, purgeEvery: every}
	s.schedules = newScheduleBatcher(s.insertCombined)
	s.claims, s.completes, s.occurrences = newClaimBatcher(s), newCompleteBatcher(s), newOccurrenceBatcher(s)
	return s, nil
}

// Partitions is the number of partitions of the store.
func (s *Store) Partitions() int { return s.partitions }

// PartitionOf is the partition of task id.
func (s *Store) PartitionOf(id string) int { return s.partitionOf(id, s.partitions) }

// querier is what the statements run on: the pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// State is where a task is in its lifecycle: driver.State, whose four
// values the column state holds.
type State = driver.State

const (
	// Pending tasks wait for their run time.
	Pending = driver.Pending
	// Running tasks are claimed by a node, under a lease.
	Running = driver.Running
	// Dead tasks ran out of retries or of lost runs; they stay until
	// canceled.
	Dead = driver.Dead
	// Done tasks ran to completion; they are kept for their retention.
	Done = driver.Done
)

// Task is a task as scheduled.
type Task struct {
	// ID names the task; the caller picks it (the cluster package draws
	// 128 random bits unless the user fixed it). Its partition is
	// Store.PartitionOf(ID).
	ID string
	// Kind names the handler that runs it.
	Kind    string
	Payload []byte
	// Due is when it is to run; a time in the past means now. It is kept
	// to the microsecond.
	Due time.Time
	// MaxRetries is how many failed runs are retried before it is dead.
	MaxRetries int
	// Metadata is the observer's metadata, stored with the task.
	Metadata string
	// Fixed says the caller fixed the ID (the cluster's WithTaskID, a
	// periodic occurrence) rather than drawing it at random: once the
	// task completes, a done marker holds its ID for the retention (see
	// Ending), as the Redis store's "fixed" field does.
	Fixed bool
}

// StoredTask is a task as the store holds it.
type StoredTask struct {
	Task
	Partition int
	State     State
	// RunAt is when it is to run next: its due time, later after a
	// failure; for a running task, the time it was pending for.
	RunAt time.Time
	// Attempts counts its failed runs, LostRuns its runs whose lease
	// expired.
	Attempts, LostRuns int
	// LeaseToken and LeaseExpires are the current claim's (running only).
	LeaseToken   string
	LeaseExpires time.Time
	ClaimedAt    time.Time
	ClaimedBy    string
	LastError    string
	// History is the task's last runs (at most driver.MaxHistory), oldest
	// first.
	History   []driver.RunRecord
	CreatedAt time.Time
	UpdatedAt time.Time
	// FinishedAt is when it became done or dead; ExpiresAt, for a done
	// task, when its retention ends.
	FinishedAt, ExpiresAt time.Time
}

// Outcome is what an operation on a claimed task did.
type Outcome string

const (
	// OutcomeDone: the run is recorded as done.
	OutcomeDone Outcome = "done"
	// OutcomeRetry: the task is pending again, for a retry after the
	// backoff.
	OutcomeRetry Outcome = "retry"
	// OutcomeDead: the task is dead, out of retries (or told not to
	// retry).
	OutcomeDead Outcome = "dead"
	// OutcomeReleased: the task is pending again for the time it was
	// pending for, no attempt counted.
	OutcomeReleased Outcome = "released"
	// OutcomeLost: the caller no longer holds the task (its lease was
	// reaped, or it was canceled), and nothing was written (fencing).
	OutcomeLost Outcome = "lost"
)

// micros is d in whole microseconds, the unit the statements take
// durations in.
func micros(d time.Duration) int64 { return d.Microseconds() }

// toTime is t in UTC to the microsecond, as the database keeps it.
func toTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
