// Package pgchaos is the chaos test of the cluster on PostgreSQL: four
// worker processes (the test binary re-executed) run cluster nodes on the
// Postgres driver (cluster.NewWithDriver), with clocks off by 0, +2 s,
// -2 s and +1.5 s, each reaching the server through a local TCP proxy of
// its own; a producer schedules a task every 10 ms with a fixed ID (one in
// five of a kind whose first two attempts fail, so retries run) and
// cancels about one in ten; the workers run a cluster-once periodic task
// too. Meanwhile, one fault at a time, chosen at random: the PostgreSQL
// server killed with SIGKILL and restarted, a worker killed with SIGKILL
// and restarted, paused with SIGSTOP past its lease, or its proxy cut past
// the lease (every connection dropped, new ones refused).
//
// The harness and the verdict are package chaoskit's, the same as the
// chaos on Redis (cluster/internal/chaos): nothing acknowledged is lost,
// no task runs twice unless a failed attempt or a fault explains it,
// nothing starts before its due time by the database's clock (the host's,
// on one machine), no retry before its backoff, every periodic occurrence
// runs while a worker is up, and no task is dead.
//
// It runs 40 s of faults in every go test of the module, more with
// CLUSTER_CHAOS_DURATION (a Go duration) or -chaos.duration;
// CLUSTER_CHAOS_SEED replays a run's choice of faults:
//
//	CLUSTER_CHAOS_DURATION=5m go test -race -count=1 -timeout 30m -run TestChaosOnPostgres -v ./cluster/pgdriver/internal/pgchaos/
package pgchaos
