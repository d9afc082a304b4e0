// Package pgdriver is the cluster package's PostgreSQL driver: a cluster
// node keeps its durable tasks in PostgreSQL instead of Redis, with the
// same lifecycle (schedule, window, claim, lease, complete, fail,
// release, reap, cancel, retention, pause, periodic tasks, membership,
// notices) as statements on a pgx pool. Driver implements driver.Driver,
// checked by the conformance suite every driver runs (cluster/drivertest),
// so cluster.NewWithDriver runs a node on it exactly as cluster.New does
// on Redis; Open migrates the database and returns it:
//
//	d, err := pgdriver.Open(ctx, pool, pgdriver.Options{})
//	node, err := cluster.NewWithDriver(d, cluster.WithLease(30*time.Second))
//
// The end-to-end tests run such nodes (node_test.go): runs and retries,
// dead tasks, a cancel reaching a run on another node, periodic
// occurrences once across nodes, two nodes sharing the partitions.
//
// What Postgres adds is the transactional schedule: Store.ScheduleTx
// stores a task inside the caller's pgx.Tx, beside the rows it is about,
// so it exists and runs if and only if that transaction commits, and the
// nodes hear of it on commit (see Example_scheduleTx; node_tx_test.go
// checks each). Its counterparts are River's riverpgxv5 driver (with
// InsertTx) and Quartz's JDBC job store.
//
// It owns the tables it creates (all named stpe_*) and the notice
// channels stpe_p<partition>. It imports pgx v5 (pgx, pgconn, pgxpool),
// package cluster/driver (the drivers' interface, records, sentinels and
// PartitionOf; it imports only the standard library) and, for
// ErrInvalidArgument, the root scheduler package; never package cluster
// itself.
//
// # Rules
//
//   - Every change of state is one statement, or one transaction, so no
//     node sees it half made. Whether a task is due, lease expiries, retry
//     times and every stamp come from the database's clock
//     (statement_timestamp()), never a node's: a node whose clock runs
//     ahead cannot start a task early, nor shorten or lengthen a lease.
//     Due times come from the caller, as in the Redis store.
//   - A claim (Store.Claim, Store.ClaimDue) moves a pending, due task of a
//     kind not paused to running, with a lease and the caller's owner
//     token; the row lock lets one claimer win. ClaimDue takes a batch
//     with FOR UPDATE SKIP LOCKED, so claimers never wait on one another.
//     The claim of a periodic occurrence (Driver.ClaimOccurrence) first
//     decides its misfire and overlap rules, under the advisory lock of
//     its kind (the function stpe_occurrence_rule).
//   - Schedule, Claim and Complete combine their concurrent calls: the
//     calls made while one is in flight go together in the next statement
//     (one round trip, one commit), each answered as it would be alone
//     (schedule_combine.go, batcher.go); a lone call runs at once.
//   - Complete, Fail, Release and Extend check the token (fencing): a run
//     that lost its lease writes nothing. Each run that ends is recorded
//     in the task's history (driver.RunRecord): its node, start, end,
//     outcome and error.
//   - A failed run counts an attempt and is retried at the database's now
//     plus the backoff, until the attempts exceed the task's retry limit:
//     then it is dead, kept with its last error until canceled.
//   - An expired lease is reaped (ReapExpired): the task is pending again,
//     due now, its lost run counted apart from its attempts, or dead past
//     the limit of lost runs.
//   - Schedule is idempotent by ID: an existing ID is never overwritten,
//     and the result says what holds it. The ends of a task follow the
//     Redis store's rules (Ending): a completed fixed ID (Task.Fixed), and
//     a canceled periodic occurrence (kind "@..."), leave a done marker
//     holding the ID for the retention, so the same task is AlreadyDone
//     and a sweep never stores the occurrence again; with done records
//     kept (driver.KeepDone) a completed or canceled task stays as a done
//     record (a canceled one's last run record says canceled), hidden past
//     its age, and TrimDone deletes the records past the age and past the
//     newest Max, in batches; without, it is deleted.
//   - Complete, Fail and ReapExpired count the run in the per-minute
//     timeline (driver.Timeline) in the same statement: its start lateness
//     bucket, and failed or lost; PurgeExpired deletes the markers and
//     minutes whose time ran out, and the done records past their age.
//   - The driver purges by itself (Redis expires the same keys by their
//     TTL): Driver.Expired, which the reaper of every started node calls
//     every quarter lease, runs PurgeExpired at most once per
//     Options.PurgeEvery (a minute by default; sooner while a backlog is
//     left), in batches of 1000 rows each its own transaction, at most 10
//     per table and call, under an advisory try-lock so that one node
//     purges at a time. A failed purge never fails the listing (the reap
//     loop would take it for a failed reap): it is counted in
//     Driver.Purges and the next run retries.
//   - A task stored, made pending (a retry, a release, a reap) or dead,
//     and a cancel, send a notice on its partition's channel, in the
//     transaction that makes the change: a ScheduleTx's notice goes out
//     when the caller commits, never if it rolls back. Claims and
//     completions send none: every transaction that notifies takes
//     PostgreSQL's one lock of notifying commits, and a claim needs no
//     notice (another node's claim finds the task gone). A Listener
//     LISTENs on a set of partitions on a connection of its own, and
//     reconnects.
//   - Each node renews its member record with a time to live
//     (RenewMember), by the database's clock; a periodic task's cursor
//     (AdvanceCursor) only moves forward.
//
// # Tables
//
// Migrate creates them from the versioned SQL files in migrations/,
// recorded in stpe_migrations (version, name, applied_at), under an
// advisory lock:
//
//   - stpe_tasks, a row per task: id (primary key), kind, payload
//     (bytea), partition, state (pending, running, dead, done), due (as
//     scheduled), run_at (when it runs next), max_retries, attempts,
//     lost_runs, lease_token, lease_expires, claimed_at and claimed_by
//     (while running), last_error, metadata, history (the last
//     driver.MaxHistory runs, as JSON, appended by the function
//     stpe_add_run), created_at, updated_at, finished_at (done or dead)
//     expires_at (done: the end of its age) and fixed (the caller fixed
//     the ID).
//     Partial indexes serve the claims and the window (run_at, and
//     partition with run_at, of the pending tasks), the reaper
//     (lease_expires of the running ones) and retention (expires_at of
//     the done ones); one more serves listing by kind and state. Two
//     triggers send the notices of inserts and of changes to pending or
//     dead; Cancel sends its own.
//   - stpe_done_marks, a done marker per ID held after its end (id,
//     kind, due, payload_md5, expires_at).
//   - stpe_timeline, the per-minute counts (partition, minute, kind,
//     field: a lateness bucket, "f" or "l", or a sample of pending depth's
//     "p" or "o"; count, expires_at), counted by the function
//     stpe_late_bucket's buckets.
//   - stpe_paused_kinds, the paused kinds (kind, paused_at).
//   - stpe_members, a row per started node (id, host, pid, version,
//     kinds, claims, stopping, started_at, heartbeat_at, expires_at).
//   - stpe_periodic_cursors, a row per periodic task (name, last_due,
//     misfire, overlap, updated_at).
//
// A notice's payload is "<state> <run_at in µs> <kind> <id>" (state
// pending or dead), "removed <kind> <id>" for a canceled task (deleted,
// or kept as a done record), "resumed <kind>" after Store.Resume, or
// "ended <kind>" when the run of a periodic occurrence ends (a trigger).
//
// The tests start a real PostgreSQL (internal/pgtest): Debian's package
// (apt-get install -y postgresql); SCHEDULER_REQUIRE_POSTGRES=1 turns its
// absence from a skip into a failure.
package pgdriver
