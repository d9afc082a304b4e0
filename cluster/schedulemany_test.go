package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Node.ScheduleMany on a real redis-server and on a real Redis Cluster of
// three masters: the same suite on both.

// manyBackend makes nodes under a prefix of their own and reads Redis
// directly.
type manyBackend struct {
	newNode func(t *testing.T, prefix string, handlers map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node
	rdb     redis.UniversalClient
}

func TestScheduleManyOnRedisServer(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := client(t, srv)
	scheduleManySuite(t, manyBackend{
		newNode: func(t *testing.T, prefix string, handlers map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
			return newNode(t, srv, handlers, append([]cluster.Option{cluster.WithPrefix(prefix)}, opts...)...)
		},
		rdb: rdb,
	})
}

func TestScheduleManyOnRedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	scheduleManySuite(t, manyBackend{
		newNode: func(t *testing.T, prefix string, handlers map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
			return newClusterNode(t, c, prefix, handlers, opts...)
		},
		rdb: clusterClient(t, c),
	})

	t.Run("with replica acknowledgements", func(t *testing.T) {
		n := newClusterNode(t, c, "{"+t.Name()+"}", nil, cluster.WithReplicaAcks(1, 5*time.Second))
		batch := make([]cluster.ScheduleManyParams, 300)
		for i := range batch {
			batch[i] = cluster.ScheduleManyParams{Kind: "k", Payload: []byte(fmt.Sprint(i)), Due: time.Now().Add(time.Hour)}
		}
		results, err := n.ScheduleMany(context.Background(), batch)
		require.NoError(t, err)
		for _, r := range results {
			require.NotEmpty(t, r.ID)
		}
		assert.Equal(t, cluster.Counts{Pending: 300}, counts(t, n))
	})
}

func scheduleManySuite(t *testing.T, b manyBackend) {
	ctx := context.Background()
	prefix := func(t *testing.T) string { return "{" + strings.ReplaceAll(t.Name(), " ", "_") + "}" }

	t.Run("three nodes run every task of a batch once", func(t *testing.T) {
		p := prefix(t)
		var mu sync.Mutex // guards runs
		runs := map[string]int{}
		ran := make(chan string, 1000)
		h := func(_ context.Context, task cluster.Task) error {
			mu.Lock()
			runs[task.ID]++
			mu.Unlock()
			ran <- task.ID
			return nil
		}
		// A sweep an hour apart and no backup claims within the test: the
		// nodes learn of the tasks from the batch's notices and from the
		// scheduling node's own window alone.
		var nodes []*cluster.Node
		for range 3 {
			n := b.newNode(t, p, map[string]cluster.Handler{"k": h},
				cluster.WithWindow(2*time.Hour), cluster.WithSweepInterval(time.Hour), cluster.WithBackupDelay(time.Hour))
			start(t, n)
			nodes = append(nodes, n)
		}
		due := time.Now().Add(300 * time.Millisecond)
		batch := make([]cluster.ScheduleManyParams, 600)
		for i := range batch {
			batch[i] = cluster.ScheduleManyParams{Kind: "k", Payload: []byte(fmt.Sprint(i)), Due: due.Add(time.Duration(i) * time.Millisecond)}
			if i%2 == 0 {
				batch[i].Opts = []cluster.ScheduleOption{cluster.WithID(fmt.Sprintf("fixed-%d", i))}
			}
		}
		results, err := nodes[0].ScheduleMany(ctx, batch)
		require.NoError(t, err)
		require.Len(t, results, len(batch))
		ids := map[string]bool{}
		for i, r := range results {
			require.NoError(t, r.Err, "task %d", i)
			ids[r.ID] = true
		}
		require.Len(t, ids, len(batch), "distinct IDs")
		assert.Equal(t, cluster.DefaultPartitions, len(partitionsOf(p, ids)), "the batch spans every partition")
		for range batch {
			recv(t, ran, 30*time.Second, "a run")
		}
		waitFor(t, 10*time.Second, "every task to complete", func() bool { return counts(t, nodes[0]) == cluster.Counts{} })

		// The same batch again: the fixed IDs are done (their markers
		// hold them), the others are new tasks.
		again, err := nodes[1].ScheduleMany(ctx, batch)
		require.NoError(t, err)
		for i, r := range again {
			require.NoError(t, r.Err, "task %d", i)
			if i%2 == 0 {
				assert.Equal(t, results[i].ID, r.ID, "task %d keeps its ID", i)
			} else {
				assert.NotEqual(t, results[i].ID, r.ID, "task %d is a new task", i)
			}
		}
		for range len(batch) / 2 {
			recv(t, ran, 30*time.Second, "a run of the new tasks")
		}
		waitFor(t, 10*time.Second, "every task to complete", func() bool { return counts(t, nodes[0]) == cluster.Counts{} })
		for _, n := range nodes {
			require.NoError(t, n.Stop(ctx))
		}
		mu.Lock()
		defer mu.Unlock()
		assert.Len(t, runs, len(batch)+len(batch)/2)
		for id, k := range runs {
			assert.Equal(t, 1, k, "runs of %s", id)
		}
	})

	t.Run("a batch with IDs is idempotent and reports each conflict", func(t *testing.T) {
		p := prefix(t)
		n := b.newNode(t, p, nil)
		due := time.Now().Add(time.Hour)
		batch := make([]cluster.ScheduleManyParams, 100)
		for i := range batch {
			batch[i] = cluster.ScheduleManyParams{Kind: "k", Payload: []byte(fmt.Sprint(i)), Due: due,
				Opts: []cluster.ScheduleOption{cluster.WithID(fmt.Sprintf("id-%d", i))}}
		}
		first, err := n.ScheduleMany(ctx, batch)
		require.NoError(t, err)
		second, err := n.ScheduleMany(ctx, batch)
		require.NoError(t, err)
		for i := range batch {
			assert.Equal(t, fmt.Sprintf("id-%d", i), first[i].ID)
			assert.Equal(t, first[i], second[i], "task %d", i)
		}
		assert.Equal(t, cluster.Counts{Pending: 100}, counts(t, n))

		// Every third task changed: each of those is a conflict, the
		// others are stored already.
		for i := range batch {
			if i%3 == 0 {
				batch[i].Payload = []byte("other")
			}
		}
		third, err := n.ScheduleMany(ctx, batch)
		require.ErrorIs(t, err, cluster.ErrIDConflict)
		assert.Contains(t, err.Error(), "34 of 100 tasks not stored")
		for i, r := range third {
			if i%3 != 0 {
				assert.NoError(t, r.Err, "task %d", i)
				assert.Equal(t, first[i].ID, r.ID)
				continue
			}
			assert.ErrorIs(t, r.Err, cluster.ErrIDConflict, "task %d", i)
			assert.ErrorIs(t, r.Err, scheduler.ErrInvalidArgument, "task %d", i)
			assert.Empty(t, r.ID)
			info := get(t, n, first[i].ID)
			assert.Equal(t, []byte(fmt.Sprint(i)), info.Payload, "the stored task %d is left as it was", i)
		}
		assert.Equal(t, cluster.Counts{Pending: 100}, counts(t, n))

		// One ID twice in a batch: the same task is stored once, a
		// different one is a conflict.
		twice, err := n.ScheduleMany(ctx, []cluster.ScheduleManyParams{
			{Kind: "k", Payload: []byte("a"), Due: due, Opts: []cluster.ScheduleOption{cluster.WithID("twice")}},
			{Kind: "k", Payload: []byte("a"), Due: due, Opts: []cluster.ScheduleOption{cluster.WithID("twice")}},
			{Kind: "k", Payload: []byte("b"), Due: due, Opts: []cluster.ScheduleOption{cluster.WithID("twice")}},
		})
		require.ErrorIs(t, err, cluster.ErrIDConflict)
		assert.Equal(t, cluster.ScheduleResult{ID: "twice"}, twice[0])
		assert.Equal(t, cluster.ScheduleResult{ID: "twice"}, twice[1])
		assert.ErrorIs(t, twice[2].Err, cluster.ErrIDConflict)
		assert.Equal(t, cluster.Counts{Pending: 101}, counts(t, n))
	})

	t.Run("bad tasks are refused one by one, the good ones stored", func(t *testing.T) {
		p := prefix(t)
		n := b.newNode(t, p, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error { return nil }},
			cluster.WithStrictKinds(), cluster.WithMaxPayload(10))
		due := time.Now().Add(time.Hour)
		good := cluster.ScheduleManyParams{Kind: "k", Payload: []byte("ok"), Due: due}
		batch := []cluster.ScheduleManyParams{
			good,
			{Kind: "k", Payload: []byte("ok")}, // zero due time
			{Kind: "k", Payload: bytes.Repeat([]byte("x"), 11), Due: due}, // payload too large
			good,
			{Kind: "two words", Due: due}, // bad kind
			{Kind: "@periodic", Due: due}, // kept for periodic tasks
			{Kind: "unknown", Due: due},   // WithStrictKinds
			{Kind: "k", Due: due, Opts: []cluster.ScheduleOption{nil}}, // nil option
			{Kind: "k", Due: due, Opts: []cluster.ScheduleOption{cluster.WithTaskMaxRetries(-1)}},
			{Kind: "k", Due: due, Opts: []cluster.ScheduleOption{cluster.WithID(strings.Repeat("i", 513))}},
			good,
		}
		results, err := n.ScheduleMany(ctx, batch)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "cluster: schedule many: 8 of 11 tasks not stored; the first, task 1: cluster: schedule k: zero due time")
		var stored []string
		for i, r := range results {
			if i == 0 || i == 3 || i == 10 {
				require.NoError(t, r.Err, "task %d", i)
				stored = append(stored, r.ID)
				continue
			}
			assert.ErrorIs(t, r.Err, scheduler.ErrInvalidArgument, "task %d", i)
			assert.Empty(t, r.ID, "task %d", i)
		}
		for _, id := range stored {
			assert.Equal(t, cluster.Pending, get(t, n, id).State)
		}
		assert.Equal(t, cluster.Counts{Pending: 3}, counts(t, n))
		none, err := n.ScheduleMany(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, none)
	})

	t.Run("10,000 tasks in one call, over every partition", func(t *testing.T) {
		p := prefix(t)
		n := b.newNode(t, p, nil)
		due := time.Now().Add(time.Hour)
		batch := make([]cluster.ScheduleManyParams, 10000)
		for i := range batch {
			batch[i] = cluster.ScheduleManyParams{Kind: fmt.Sprintf("k%d", i%3), Payload: []byte(fmt.Sprint(i)), Due: due.Add(time.Duration(i) * time.Second)}
		}
		t0 := time.Now()
		results, err := n.ScheduleMany(ctx, batch)
		t.Logf("ScheduleMany of %d tasks: %v", len(batch), time.Since(t0))
		require.NoError(t, err)
		ids := map[string]bool{}
		for _, r := range results {
			ids[r.ID] = true
		}
		require.Len(t, ids, len(batch))
		parts := partitionsOf(p, ids)
		assert.Len(t, parts, cluster.DefaultPartitions)
		var total int64
		for key, want := range parts {
			got, err := b.rdb.ZCard(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, int64(want), got, key)
			total += got
		}
		assert.Equal(t, int64(len(batch)), total)
		assert.Equal(t, cluster.Counts{Pending: int64(len(batch))}, counts(t, n))
		for _, i := range []int{0, 4999, 9999} {
			info := get(t, n, results[i].ID)
			assert.Equal(t, batch[i].Kind, info.Kind)
			assert.Equal(t, batch[i].Payload, info.Payload)
			assert.True(t, batch[i].Due.Truncate(time.Microsecond).Equal(info.Due), "due of task %d", i)
		}
	})

	t.Run("a paused kind waits out of the pending set until resumed", func(t *testing.T) {
		p := prefix(t)
		ran := make(chan string, 100)
		n := b.newNode(t, p, map[string]cluster.Handler{
			"paused": func(_ context.Context, task cluster.Task) error { ran <- task.ID; return nil },
		})
		require.NoError(t, n.Pause(ctx, "paused"))
		start(t, n)
		batch := make([]cluster.ScheduleManyParams, 50)
		for i := range batch {
			batch[i] = cluster.ScheduleManyParams{Kind: "paused", Due: time.Now()}
		}
		results, err := n.ScheduleMany(ctx, batch)
		require.NoError(t, err)
		for _, r := range results {
			in, err := b.rdb.ZScore(ctx, cluster.PartitionKey(p, r.ID, "pending"), r.ID).Result()
			assert.ErrorIs(t, err, redis.Nil, "%s is not in the pending set (score %v)", r.ID, in)
			_, err = b.rdb.ZScore(ctx, cluster.PartitionKey(p, r.ID, "k:pending:paused"), r.ID).Result()
			assert.NoError(t, err, "%s waits in its kind's index", r.ID)
		}
		assert.Equal(t, cluster.Counts{Pending: 50}, counts(t, n))
		require.NoError(t, n.Resume(ctx, "paused"))
		got := map[string]bool{}
		for range batch {
			got[recv(t, ran, 20*time.Second, "a run after Resume")] = true
		}
		for _, r := range results {
			assert.True(t, got[r.ID], "%s ran", r.ID)
		}
	})

	t.Run("a partition's share beyond one script is split, in order", func(t *testing.T) {
		p := prefix(t)
		n := b.newNode(t, p, nil, cluster.WithPartitions(2))
		due := time.Now().Add(time.Hour)
		batch := make([]cluster.ScheduleManyParams, 1200)
		for i := range batch {
			batch[i] = cluster.ScheduleManyParams{Kind: "k", Payload: []byte(fmt.Sprint(i)), Due: due}
		}
		// The same ID first and last, a different task under another ID
		// first and last: hundreds of tasks, so scripts, apart.
		same := []cluster.ScheduleOption{cluster.WithID("same")}
		batch[0].Opts, batch[1199].Opts = same, same
		batch[1199].Payload = batch[0].Payload
		other := []cluster.ScheduleOption{cluster.WithID("other")}
		batch[1].Opts, batch[1198].Opts = other, other
		results, err := n.ScheduleMany(ctx, batch)
		require.ErrorIs(t, err, cluster.ErrIDConflict)
		assert.Contains(t, err.Error(), "1 of 1200 tasks not stored")
		assert.Equal(t, cluster.ScheduleResult{ID: "same"}, results[0])
		assert.Equal(t, cluster.ScheduleResult{ID: "same"}, results[1199])
		assert.Equal(t, cluster.ScheduleResult{ID: "other"}, results[1])
		assert.ErrorIs(t, results[1198].Err, cluster.ErrIDConflict)
		assert.Equal(t, cluster.Counts{Pending: 1198}, counts(t, n))
	})

	t.Run("a failed partition fails its tasks alone", func(t *testing.T) {
		p := prefix(t)
		n := b.newNode(t, p, nil)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		results, err := n.ScheduleMany(canceled, []cluster.ScheduleManyParams{
			{Kind: "k", Due: time.Now()},
			{Kind: "k"},
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, results[0].Err, context.Canceled)
		assert.True(t, errors.Is(results[1].Err, scheduler.ErrInvalidArgument), "the bad task keeps its own error: %v", results[1].Err)
	})
}

// partitionsOf counts ids by the pending set of their partition under
// prefix.
func partitionsOf(prefix string, ids map[string]bool) map[string]int {
	key := cluster.PartitionKeyer(prefix)
	parts := map[string]int{}
	for id := range ids {
		parts[key(id, "pending")]++
	}
	return parts
}

func TestScheduleManyStoresTheObserversMetadataAndReportsEachTaskCreated(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	seen := make(chan string, 10)
	n := newNode(t, srv, map[string]cluster.Handler{"mail": func(ctx context.Context, _ cluster.Task) error {
		id, _ := ctx.Value(traceKey{}).(string)
		seen <- id
		return nil
	}}, cluster.WithObserver(rec.observer()))
	start(t, n)

	ctx := context.WithValue(context.Background(), traceKey{}, "trace-many")
	// Ten tasks: the recorder's channels hold 16 claims and ends.
	batch := make([]cluster.ScheduleManyParams, 10)
	for i := range batch {
		batch[i] = cluster.ScheduleManyParams{Kind: "mail", Payload: []byte(fmt.Sprint(i)), Due: time.Now(),
			Opts: []cluster.ScheduleOption{cluster.WithID(fmt.Sprintf("mail-%d", i))}}
	}
	_, err := n.ScheduleMany(ctx, batch)
	require.NoError(t, err)
	for range batch {
		assert.Equal(t, "trace-many", recv(t, seen, 10*time.Second, "a run"), "the handler's ctx carries the stored metadata")
	}
	// The same tasks again are no new tasks: not reported.
	_, err = n.ScheduleMany(ctx, batch)
	require.NoError(t, err)
	assert.Len(t, rec.scheduledKinds(), len(batch))
	assert.Positive(t, rec.scriptCalls("schedule many"), "the script is named for the observer")
}
