package cluster_test

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
)

// The periodic rules on a real Redis Cluster of three masters: the claim
// of an occurrence sees the task's other occurrences because they all live
// in the partition of its name, whichever master that is on.
func TestPeriodicRulesOnRedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	mk := func(t *testing.T) func() *cluster.Node {
		return func() *cluster.Node { return newClusterNode(t, c, "{"+t.Name()+"}", nil) }
	}

	t.Run("paused then resumed runs one coalesced occurrence", func(t *testing.T) {
		rec := &runRecorder{}
		nodes := periodicNodes(t, 3, rec, mk(t))
		paused, resuming := pauseAndResume(t, nodes[0], rec, 12)
		waitFor(t, 30*time.Second, "four runs after the resume", func() bool { return len(rec.startedAfter(resuming)) >= 4 })
		assertCoalesced(t, rec, paused, resuming)
		assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
	})

	t.Run("run each runs every missed occurrence in order", func(t *testing.T) {
		rec := &runRecorder{}
		nodes := periodicNodes(t, 3, rec, mk(t), cluster.WithMisfire(cluster.MisfireRunEach))
		paused, resuming := pauseAndResume(t, nodes[0], rec, 12)
		assertRanEachInOrder(t, rec, paused, resuming)
	})

	t.Run("long runs never overlap", func(t *testing.T) {
		rec := &runRecorder{hold: 3 * misfirePeriod}
		periodicNodes(t, 3, rec, mk(t))
		waitFor(t, 30*time.Second, "eight runs", func() bool { return len(rec.snapshot()) >= 8 })
		assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
	})
}
