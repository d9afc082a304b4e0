package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBulkActionsOnRedisCluster runs every bulk action on a Redis Cluster
// of three masters, over tasks spread across all of them: more than a
// thousand dead tasks retried in one call while nodes claim them, a
// selection by IDs over every partition, a cancel racing the claims.
func TestBulkActionsOnRedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	ctx := context.Background()
	p := "{" + t.Name() + "}"
	var healed atomic.Bool
	var mu sync.Mutex // guards runs
	runs := map[string]int{}
	ran := make(chan string, 5000)
	h := func(_ context.Context, task cluster.Task) error {
		if !healed.Load() {
			return fmt.Errorf("broken: %w", cluster.ErrSkipRetry)
		}
		mu.Lock()
		runs[task.ID]++
		mu.Unlock()
		ran <- task.ID
		return nil
	}
	var workers []*cluster.Node
	for range 2 {
		w := newClusterNode(t, c, p, map[string]cluster.Handler{"k": h}, cluster.WithConcurrency(32))
		start(t, w)
		workers = append(workers, w)
	}
	ops := newClusterNode(t, c, p, map[string]cluster.Handler{"k": h})

	var ids []string
	for i := range 1200 {
		id, err := ops.Schedule(ctx, "k", nil, time.Now(), cluster.WithID(fmt.Sprintf("k%05d", i)))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	waitFor(t, 60*time.Second, "every task to die", func() bool { return counts(t, ops).Dead == 1200 })

	// A selection by IDs over every partition: delete 200 of them.
	res, err := ops.DeleteAll(ctx, cluster.Selection{State: cluster.Dead, IDs: append([]string{"nope"}, ids[:200]...)})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 200, Changed: 200}, res)
	n, err := ops.CountSelected(ctx, cluster.Selection{State: cluster.Dead, Kind: "k"})
	require.NoError(t, err)
	assert.Equal(t, 1000, n)

	// Retry the other thousand while the two workers claim them.
	healed.Store(true)
	res, err = ops.RetryAll(ctx, cluster.Selection{State: cluster.Dead, Kind: "k"})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 1000, Changed: 1000}, res)
	for range 1000 {
		recv(t, ran, 30*time.Second, "a run of a retried task")
	}
	waitFor(t, 10*time.Second, "every run to end", func() bool { return counts(t, ops) == cluster.Counts{} })
	mu.Lock()
	for _, id := range ids[200:] {
		assert.Equal(t, 1, runs[id], "runs of %s", id)
	}
	mu.Unlock()

	// Cancel racing the claims: tasks fall due one a millisecond; the
	// cancel starts once the first ran.
	due := time.Now().Add(2 * time.Second)
	var fresh []string
	for i := range 1500 {
		id, err := ops.Schedule(ctx, "k", nil, due.Add(time.Duration(i)*time.Millisecond), cluster.WithID(fmt.Sprintf("c%05d", i)))
		require.NoError(t, err)
		fresh = append(fresh, id)
	}
	recv(t, ran, 30*time.Second, "the first run")
	res, err = ops.CancelAll(ctx, cluster.Selection{State: cluster.Pending})
	require.NoError(t, err)
	for range len(fresh) - res.Changed - 1 {
		recv(t, ran, 30*time.Second, "a run of a task claimed before the cancel")
	}
	waitFor(t, 10*time.Second, "every run to end", func() bool { return counts(t, ops) == cluster.Counts{} })
	for _, w := range workers {
		w.StopNow()
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, id := range fresh {
		assert.LessOrEqual(t, runs[id], 1, "runs of %s", id)
		total += runs[id]
	}
	assert.Equal(t, len(fresh), total+res.Changed, "each task either canceled or run once")
	t.Logf("cancel: matched %d, changed %d, run %d", res.Matched, res.Changed, total)

	// Run now and pause on the cluster: a paused kind's tasks are brought
	// forward and wait.
	require.NoError(t, ops.Pause(ctx, "k"))
	later := scheduleMany(t, ops, "k", "l", 300, time.Now().Add(time.Hour))
	res, err = ops.RunNowAll(ctx, cluster.Selection{State: cluster.Pending, Kind: "k"})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 300, Changed: 300}, res)
	info, _, err := ops.Get(ctx, later[0])
	require.NoError(t, err)
	assert.True(t, info.Paused)
	assert.True(t, info.Due.After(info.NextRun), "RunNowAll keeps Due, an hour away, and runs it now")

	// A node with no handler knows a kind by its stored tasks in the
	// partitions of every master, and refuses one nothing knows.
	producer := newClusterNode(t, c, p, nil)
	n, err = producer.CountSelected(ctx, cluster.Selection{State: cluster.Pending, Kind: "k"})
	require.NoError(t, err)
	assert.Equal(t, 300, n)
	_, err = producer.CancelAll(ctx, cluster.Selection{State: cluster.Pending, Kind: "kk"})
	assert.ErrorIs(t, err, cluster.ErrUnknownKind)
	assert.ErrorIs(t, producer.Resume(ctx, "kk"), cluster.ErrUnknownKind)
	res, err = ops.CancelAll(ctx, cluster.Selection{State: cluster.Pending})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 300, Changed: 300}, res)
}
