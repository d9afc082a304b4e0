// Package cluster runs durable delayed tasks and cluster-once periodic tasks
// on Redis, shared by every replica of a service: the layer above a
// scheduler.Scheduler for work that must survive a restart and run once
// across replicas. It is related to Quartz's clustered JDBC job store and to
// ShedLock in the Java world, and to asynq and River in Go.
//
// # Guarantees
//
//   - Node.Schedule returns once Redis holds the task. A node that handles
//     the task's kind runs it at its due time. Delivery is at least once,
//     and exactly once when nothing crashes and no run outlives its lease.
//   - A claim is one Lua script, so only one node can win it, and it checks
//     the due time against Redis's clock: no task starts before its due
//     time by Redis's clock, whatever a node's clock says. The claim takes
//     a lease, renewed every quarter lease while the run goes on. If a node
//     dies, stalls or loses Redis, its lease expires and a reaper (two
//     live nodes per partition run one) returns the task to pending, so another node runs it.
//     That lost run is counted in Task.Lost and does not use up a retry;
//     lost runs have their own limit (WithMaxLostRuns).
//   - Every Redis call on the lease path (claim, renewal, completion,
//     failure, hand-back) carries its own deadline derived from the time
//     left on the lease, whatever the client's timeouts, and no node mutex
//     is ever held across a call into the Scheduler, Redis or a handler, so
//     renewals are never held up by the window or a slow handler.
//   - A failed run (an error, a panic, or a handler past its time limit,
//     WithTaskTimeout) is retried with backoff (WithBackoff) up to its
//     retry limit (WithMaxRetries, WithTaskMaxRetries). After that the task
//     is dead: it stays in Redis with its last error (with the stack, for a
//     panic) until Node.Cancel removes it.
//   - Node.Cancel removes a task in any state; once it returned, no node
//     claims the task again, and it says whether a run was in flight (that
//     run's ctx is canceled within a third of the lease). A node does not
//     call the handler of a claimed task whose cancel it has heard (the
//     notice on the partition's channel, or a renewal's answer that the
//     lease is gone): between the claim and the call it checks what it
//     heard, in memory, without a Redis round trip. What remains is a
//     notice still in flight when the handler starts: the handler is
//     called, possibly after Cancel returned with WasRunning, and its ctx
//     is canceled when the notice arrives. In the race test (1,500 tasks
//     canceled as they fall due, under -race on two busy shared cores),
//     over eight runs, that was 50 to 91 calls per 1,500 tasks (of 1,040
//     to 1,260 canceled while running), which ran a median 0.07 to 1.4 ms,
//     and at most 24 ms, before their node heard the notice.
//   - Node.Stop hands a claimed task that has not started yet back at once,
//     keeping its due time, and waits for the running handlers. If its ctx
//     ends first, it cancels them and hands their tasks back. Node.StopNow
//     leaves running tasks to their leases. Either way nothing is lost.
//   - Node.Periodic declares a named task with a scheduler.Trigger on every
//     node. It runs at most once per due time across all nodes, with no
//     leader (see below), and never bursts: occurrences overdue together
//     (after a Pause, while every node was down or cut off from Redis, or
//     while the previous run went on) coalesce into one run, the latest
//     due, after which the runs go on at the trigger's times
//     (MisfireCoalesce, the default; WithMisfire: MisfireSkip runs none of
//     them, MisfireRunEach runs each, one after another, in order). Two of
//     its occurrences never run at once anywhere in the cluster: the next
//     is claimed only after the running one ended, or its lease expired
//     (WithOverlap(true) allows it). The claim script decides both by
//     Redis's clock.
//   - A task starts late by the in-memory scheduler's lateness plus one
//     Redis round trip (the claim), not by a polling interval.
//
// # Design
//
// The tasks of a key prefix (WithPrefix, default "{scheduler}") are spread
// over P partitions (WithPartitions, default DefaultPartitions, 64), each
// under a hash tag of its own: partition i's keys start with
// "{scheduler/i.j}", j chosen so that the tag's Redis Cluster slot lies in
// the i-th of P equal ranges of the 16,384 slots, so a Redis Cluster of M
// masters holds about P/M partitions each. A task's partition is a hash of
// its ID (FNV-1a, modulo P), so a fixed ID always lands in the same one;
// the occurrences of a periodic task (IDs name@due) are all in the
// partition of its name. The keys of a partition q are:
//
//   - q:pending, a sorted set of task IDs scored by the time each task is
//     to run next (µs since the epoch), but for those of a paused kind;
//   - q:t:<id>, a hash per task holding kind, payload, due time, attempt,
//     retry limit, last error, a checksum, the owner token and start of
//     the current claim, and the history of its last runs;
//   - q:lease, a sorted set of claimed IDs scored by lease expiry;
//   - q:dead, a sorted set of dead IDs scored by time of death;
//   - q:done, a sorted set of done records (WithKeepDone) scored by time of
//     completion;
//   - q:k:<state>:<kind>, beside each of those four sets, one per kind
//     with the same scores, which the sweep, Node.List and
//     Node.CountsByKind read; q:kinds, the set of kinds with stored tasks;
//     and q:paused, the set of paused kinds (Node.Pause writes every
//     partition's);
//   - q:done:<id>, a marker, kept for WithRetention, for a task whose
//     caller fixed its ID;
//   - q:periodic:<name>, in the partition of periodic task name: its
//     cursor (the latest occurrence stored) and its misfire policy and
//     overlap setting;
//   - q:events, the partition's pub/sub channel, sharded (SPUBLISH and
//     SSUBSCRIBE): its messages stay on the partition's shard.
//
// The cluster-wide records stay under the prefix, in its one slot:
//
//   - prefix:nodes, a sorted set of the live nodes that claim, scored by
//     membership expiry, and prefix:nodekinds, the kinds each handles;
//   - prefix:member:<id>, a hash per started node (host, pid, version,
//     start, heartbeat, counts, kinds, stopping), expiring a lease after
//     its last renewal, indexed by the sorted set prefix:members
//     (Node.Members);
//   - prefix:periodic:<name>, a hash per declared periodic task (trigger,
//     next time, last run), expiring a lease after its last declaring
//     node's renewal, indexed by the sorted set prefix:periodic
//     (Node.PeriodicTasks);
//   - prefix:layout, the number of partitions and the layout's version,
//     written by the first node to start (a node with another number, or
//     an older keyspace, is refused with ErrLayout; see Migrate);
//   - prefix:membership, a pub/sub channel on which a node announces that
//     it joined or left.
//
// Every change of state is a Lua script, kept beside the Go function that
// runs it, so the store is never seen half-changed. Whether a task is due,
// lease expiries, retry times and the times the scripts stamp come from
// Redis's clock (TIME), so a replica's wrong clock can neither start a task
// early nor shorten or lengthen a lease. A claim carries an owner token, and completing,
// failing, releasing and renewing all check it. A run that lost its lease
// therefore cannot complete or retry a task that another node now holds
// (fencing).
//
// Every script works on one partition and is given every key it touches,
// as Redis Cluster requires; an operation over all partitions (the sweep,
// List, Counts, Pause) is one pipeline, which a cluster client splits into
// one round trip per master.
//
// Ownership: for each kind, the live nodes that handle it share the
// partitions by balanced rendezvous hashing (at most ceil(P/N) each), and
// each partition has one backup, the next node in its order. A node keeps
// a window in memory of the tasks of the partitions it owns that are due
// within the next WithWindow, each waiting in the node's
// scheduler.Scheduler for its due time. At that time the node claims the
// task and, if it wins, runs it. The window is fed three ways:
//
//   - by the node's own Schedule calls;
//   - by the channels of the partitions it owns, to which every script
//     that makes a task pending publishes (schedule, retry, hand-back,
//     reap);
//   - by a sweep of the owned partitions every WithSweepInterval, at
//     Start, after every pub/sub (re)subscription, since messages sent
//     while a subscription was down are lost, and when its share moves.
//     The sweep is only the safety net.
//
// A backup loads nothing: every WithBackupDelay (less often while it finds
// nothing) it claims the tasks of the partitions it backs up that are
// overdue by more than that delay, newest first: the tasks of a busy,
// stalled or dead owner. So each of N nodes holds about 1/N of the near-due
// tasks and hears about 1/N of the notices. A node that joins or leaves
// announces it on prefix:membership and every node recomputes its share at
// once; a dead node's share moves when its membership lapses, within a
// lease. Ownership only decides who tries first: the claim is atomic and
// fenced, so nodes that disagree on the membership for a moment claim in
// vain at worst, and a move never runs a task twice nor loses one. A node
// claims only when one of its workers is free (WithConcurrency) and the
// task's kind is below its limit on the node (WithKindConcurrency); a due
// task waits for that in its kind's ready queue, and when several kinds
// wait, their priorities (WithKindPriority, WithStrictPriority) decide
// which a free worker takes.
//
// Every started node keeps a record of itself in Redis (Node.Members) and
// of the periodic tasks it declares (Node.PeriodicTasks), renewed with its
// membership and expiring a lease after the last renewal, and logs a
// warning about due tasks of a kind no live node handles.
//
// Cluster-once periodic tasks are ordinary durable tasks whose ID is
// name@due (OccurrenceID). On each sweep, every node stores the occurrences
// that its Trigger puts inside the window. The store is idempotent: same ID
// and same content is a no-op, which is what asynq's TaskID and Retention
// workaround does by hand (asynq issues #395, #554, #1013). When an
// occurrence completes, its done marker stops a node whose clock runs
// behind from storing it again. The due time comes from the trigger, not
// from anyone's clock, so clock skew only moves which node tries to claim
// first. Skew below the retention cannot double a run: the occurrence is
// claimed once, and the marker outlives the skew. If the node running an occurrence
// dies, the lease returns that occurrence to pending and another node runs
// it, under the rules below.
//
// Periodic occurrences never burst. Every occurrence of one periodic task
// is stored in the partition of its name, so the claim of one (one Lua
// script, by Redis's clock) sees the others, and applies two rules before
// it claims. The misfire policy (WithMisfire; Quartz's misfire
// instructions): an occurrence is missed if the trigger's next occurrence
// after it is due too; under MisfireCoalesce (the default) a missed one is
// skipped, so the latest due runs once for all of them and the runs go on
// at the trigger's times after it; under MisfireSkip a missed one is
// skipped, and so is one late by more than the misfire threshold (a
// second, or half the time to the next occurrence if shorter); under
// MisfireRunEach none is skipped, but an occurrence waits while an earlier
// one is pending, so they run in order. A skipped occurrence is removed
// and leaves its done marker, so no node stores it again. The overlap rule
// (WithOverlap, false by default; Quartz's @DisallowConcurrentExecution):
// an occurrence waits while another of the task is running, until that
// run ended or its lease expired and the reaper returned it. A waiting
// occurrence stays pending and in its owner's window; the node that ran
// the other publishes "ended" on the partition's channel when the run
// ended, and the owner claims again at once (or after a quarter lease if
// the notice is lost). A failed run's retries are not occurrences: no
// misfire rule applies to them, but they wait for a running occurrence.
// Each sweep stores the occurrences from the task's cursor (q:periodic:
// <name>), so after every node was down the sweep stores what may run:
// the latest due under MisfireCoalesce, each missed one under
// MisfireRunEach, none under MisfireSkip.
//
// # Compared with the peers
//
//   - asynq (Redis) parks delayed tasks in a sorted set. A forwarder moves
//     the due ones to the pending list every DelayedTaskCheckInterval
//     (default 5 s), and an idle processor polls that list every
//     TaskCheckInterval (default 1 s, with jitter). So a task starts up to
//     seconds late, and lowering the intervals adds polling load. Its
//     leases (30 s) and recoverer (every minute) play the part of ours. Its
//     periodic-task Scheduler must run as a single process, or every
//     instance enqueues every occurrence. Here, every replica declares the
//     periodic task and it still runs once.
//   - River (Postgres) inserts a job with a future ScheduledAt as
//     "scheduled". A maintenance job moves such jobs to "available" every
//     5 s (JobSchedulerIntervalDefault), so lateness is again a polling
//     interval. Its periodic jobs run on the elected leader only.
//   - ShedLock only locks: a task that every replica runs on its own clock
//     is skipped by the replicas that find the lock held (lockAtMostFor is
//     the lease). It stores no tasks, so a run missed during a restart is
//     gone, and skew larger than lockAtLeastFor doubles a run. Here the due
//     time is the identity, and the occurrence stays stored until it ran.
//   - Quartz's clustered JDBC store takes a row lock (SELECT ... FOR UPDATE
//     on QRTZ_LOCKS) to acquire triggers. Nodes check in every
//     clusterCheckinInterval (default 7.5 s), and the jobs of a node that
//     misses its check-in are recovered. Those are the same roles as our
//     claim script, heartbeat and reaper, with a database lock in place of
//     Lua's atomicity.
//
// # Observing
//
// WithObserver installs an Observer: functions told of every task stored
// and claim won, of each run's start and end (outcome, duration, whether
// the task went dead) and of each script's Redis latency, with metadata
// (a trace context) stored with a task and handed to its runs. Node.Stats
// gives what the node holds in memory. The otelcluster module builds
// OpenTelemetry metrics and spans on them; without an observer they cost
// nothing.
//
// # Redis
//
// Use a Redis (or Valkey) of version 7 or later, and turn on the AOF with
// appendfsync always (or everysec, accepting the loss of the last second)
// if an acknowledged Schedule must survive a crash of Redis itself. Give
// the go-redis client a PoolSize above WithConcurrency.
//
// On a Redis Cluster (redis.NewClusterClient) the partitions spread over
// the masters, so adding shards adds throughput; the cluster-wide records
// are on the master of the prefix's own slot. Replication is asynchronous: a failover can
// lose the writes the dead master acknowledged last. WithReplicaAcks makes
// Schedule and Cancel wait for replicas (Redis's WAIT), so that nothing
// acknowledged is lost; a lost write on the lease path only repeats a run.
// After a failed renewal, Schedule or Cancel a node asks its cluster
// client to reread the slots, so it finds a promoted replica at once.
//
// The tests start a real redis-server of their own on a free port, or a
// Redis Cluster of three masters with a replica each (internal/redistest),
// and so do the chaos test (internal/chaos) and the benchmarks
// (benchmarks/clusterbench, benchmarks/clusterscale); nothing here is
// tested against a mock. docs/cluster.md has the guarantees table, the
// measured clock skew tolerated, running on Redis Cluster and how to run
// the chaos test for longer.
//
// This package holds the public API and the rules of a task's life
// (retries and backoff, lost-run limits, periodic misfire and overlap,
// time limits, partition ownership, the in-memory window, observation).
// It reaches the store only through the interface of package driver
// (cluster/driver); New puts the Redis driver (cluster/internal/redisdriver,
// which alone knows the keys and the Lua scripts) behind it, and
// NewWithDriver any other driver (the Postgres driver of the module
// cluster/pgdriver), on which the node does none of its Redis-only work.
// It imports the root module, package driver, the Redis driver and
// go-redis (for New's client, Migrate, RecordedPartitions and Keyspaces).
package cluster
