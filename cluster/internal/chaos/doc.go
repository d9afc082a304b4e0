// Package chaos is the cluster module's chaos test: several replica
// processes (./replica), some with clocks skewed by up to ±2 s, share one
// redis-server with the append-only file on, while the test kills replicas
// (SIGKILL), pauses them past their lease (SIGSTOP), restarts Redis and
// cuts replicas off from it through a local TCP proxy; a producer schedules
// and cancels tasks all along. Then it checks, from the ledger the
// replicas' handlers write, that nothing acknowledged was lost, that no
// task was claimed after a successful Cancel, that no task ran twice
// without a fault to explain it, that every periodic occurrence ran while
// a replica was up (the periodic task runs each missed occurrence,
// MisfireRunEach, and never two at once), and that nothing started before
// its due time by Redis's clock.
//
// The harness, the workers' life and the verdict are package chaoskit's,
// which another store's chaos shares: this package gives the two Redis
// stores and the replica command.
//
// It runs for 60 s by default, longer with CLUSTER_CHAOS_DURATION (a Go
// duration) or -chaos.duration when this package is tested alone:
//
//	CLUSTER_CHAOS_DURATION=10m go test -race -run 'TestChaos$' -v ./cluster/internal/chaos/
//
// CLUSTER_CHAOS_SEED replays a run's choices of faults.
//
// TestChaos runs it on one redis-server; TestChaosOnRedisCluster runs it
// on a Redis Cluster of three masters with one replica each (see
// redis_test.go), both in every go test of the module: the Redis fault is
// then the SIGKILL of a master the seed picks (the tasks' partitions are
// on every master), its replica promoted, and the killed server back as
// the new master's replica; every
// replica reaches every server through a proxy of its own, so a partition
// cuts it off from all of them. The producer's writes and the periodic
// occurrences wait for a replica's acknowledgement (WithReplicaAcks):
//
//	CLUSTER_CHAOS_DURATION=3m go test -race -run TestChaosOnRedisCluster -v ./cluster/internal/chaos/
package chaos
