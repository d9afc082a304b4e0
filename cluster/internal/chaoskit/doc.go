// Package chaoskit is the cluster's chaos test, whatever store it runs
// on: worker processes running cluster nodes (Serve), each reaching the
// store through a local TCP proxy of its own that can cut it off (Proxy),
// a producer that schedules and cancels tasks all along, faults one at a
// time (a worker killed with SIGKILL and restarted, paused with SIGSTOP
// past its lease, cut off past its lease, or the store's own fault), a
// ledger the workers' handlers write, and the verdict read from it (Run).
//
// The verdict flags only what no injected fault explains, so it does not
// depend on timing luck:
//
//   - nothing acknowledged is lost: every task whose Schedule returned nil
//     ran to its end, unless a Cancel removed it (or may have: a Cancel
//     that failed);
//   - no claim after a successful Cancel (one run may start after it only
//     if Cancel said a run was in flight);
//   - no second run of a task unless the first failed and the second is
//     the next attempt (a retry), or a fault that hit the store or either
//     run's worker falls between a lease before the first start and the
//     second start; each worker logs its own stalls (no CPU for more than
//     500 ms), which count as faults;
//   - nothing starts before its due time by the store's clock (the host's,
//     on one machine), and no retry starts before the failure plus the
//     backoff;
//   - every periodic occurrence (every 500 ms, MisfireRunEach) ran, if some
//     worker was up from its window, skew and a sweep before it (the
//     backlog a fault left runs after the faults, as the tasks' does:
//     the drain waits for both);
//   - no task is dead.
//
// The workers' clocks are off by 0, +2 s, -2 s and +1.5 s. The chaos on
// Redis is package cluster/internal/chaos. CLUSTER_CHAOS_DURATION (a Go
// duration) lengthens either, and CLUSTER_CHAOS_SEED replays a run's
// choice of faults (their timing still varies).
package chaoskit
