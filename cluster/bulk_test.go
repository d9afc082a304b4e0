package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCounter counts the runs of each task and signals each run.
type runCounter struct {
	ran chan string

	mu   sync.Mutex // guards runs
	runs map[string]int
}

func newRunCounter(capacity int) *runCounter {
	return &runCounter{ran: make(chan string, capacity), runs: map[string]int{}}
}

func (c *runCounter) count(id string) {
	c.mu.Lock()
	c.runs[id]++
	c.mu.Unlock()
	c.ran <- id
}

func (c *runCounter) of(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

// scheduleMany stores n tasks of kind through node, due at due, with IDs
// prefix + number, and returns their IDs.
func scheduleMany(t *testing.T, node *cluster.Node, kind, prefix string, n int, due time.Time) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := node.Schedule(context.Background(), kind, nil, due, cluster.WithID(fmt.Sprintf("%s%05d", prefix, i)))
		require.NoError(t, err)
		ids[i] = id
	}
	return ids
}

// killAll makes n tasks of kind dead on node's store: a worker on srv whose
// handler fails them past retrying runs each once. It returns their IDs.
func killAll(t *testing.T, srv *redistest.Server, ops *cluster.Node, kind, prefix string, n int) []string {
	t.Helper()
	var died atomic.Int64
	worker := newNode(t, srv, map[string]cluster.Handler{kind: func(context.Context, cluster.Task) error {
		died.Add(1)
		return fmt.Errorf("broken: %w", cluster.ErrSkipRetry)
	}}, cluster.WithConcurrency(32))
	start(t, worker)
	ids := scheduleMany(t, ops, kind, prefix, n, time.Now())
	waitFor(t, 60*time.Second, "every task to die", func() bool {
		c, err := ops.CountSelected(context.Background(), cluster.Selection{State: cluster.Dead, Kind: kind})
		return err == nil && c == n
	})
	worker.StopNow()
	return ids
}

// TestBulkActionsChangeEveryTaskTheSelectionPicksAndNoOther retries,
// deletes, runs now and cancels more than a thousand tasks each in one
// call, by kind, by time and by IDs over many partitions, and checks that
// what is outside the selection is left alone.
func TestBulkActionsChangeEveryTaskTheSelectionPicksAndNoOther(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	runs := newRunCounter(4000)
	ok := func(_ context.Context, task cluster.Task) error { runs.count(task.ID); return nil }
	ops := newNode(t, srv, map[string]cluster.Handler{"d": ok, "p": ok, "other": ok})

	dead := killAll(t, srv, ops, "d", "d", 1100)
	other := scheduleMany(t, ops, "other", "o", 50, time.Now().Add(time.Hour))
	far := time.Now().Add(2 * time.Hour)
	pending := scheduleMany(t, ops, "p", "p", 1200, far)

	n, err := ops.CountSelected(ctx, cluster.Selection{State: cluster.Dead})
	require.NoError(t, err)
	assert.Equal(t, 1100, n)
	n, err = ops.CountSelected(ctx, cluster.Selection{State: cluster.Pending, Before: far})
	require.NoError(t, err)
	assert.Equal(t, 50, n, "only the tasks of kind other run before far")
	n, err = ops.CountSelected(ctx, cluster.Selection{State: cluster.Dead, IDs: append([]string{"nope", dead[0], dead[0]}, other...)})
	require.NoError(t, err)
	assert.Equal(t, 1, n, "an unknown ID, a repeat and tasks in another state are not counted")

	// Dead tasks of kind d before a time that picks none: nothing changes.
	res, err := ops.RetryAll(ctx, cluster.Selection{State: cluster.Dead, Kind: "d", Before: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{}, res)

	// Delete 100 dead tasks by ID, among which pending ones that stay.
	ids := append(append([]string{}, dead[:100]...), pending[:20]...)
	res, err = ops.DeleteAll(ctx, cluster.Selection{State: cluster.Dead, IDs: ids})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 100, Changed: 100}, res)
	for _, id := range dead[:100] {
		_, found, err := ops.Get(ctx, id)
		require.NoError(t, err)
		assert.False(t, found, "deleted %s", id)
	}

	// Retry the other 1000 dead tasks; a started worker runs each once.
	res, err = ops.RetryAll(ctx, cluster.Selection{State: cluster.Dead, Kind: "d"})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 1000, Changed: 1000}, res)
	worker := newNode(t, srv, map[string]cluster.Handler{"d": ok, "p": ok, "other": ok}, cluster.WithConcurrency(32))
	start(t, worker)
	for range 1000 {
		recv(t, runs.ran, 30*time.Second, "a run of a retried task")
	}
	for _, id := range dead[100:] {
		assert.Equal(t, 1, runs.of(id), "runs of retried %s", id)
	}

	// Run now every pending task of kind p: each runs once, those of kind
	// other stay pending.
	res, err = ops.RunNowAll(ctx, cluster.Selection{State: cluster.Pending, Kind: "p"})
	require.NoError(t, err)
	assert.Equal(t, 1200, res.Matched)
	assert.Equal(t, 1200, res.Changed)
	for range 1200 {
		recv(t, runs.ran, 30*time.Second, "a run of a task run now")
	}
	for _, id := range pending {
		assert.Equal(t, 1, runs.of(id), "runs of %s", id)
	}
	worker.StopNow()

	// Cancel every pending task of every kind: the 50 of kind other.
	res, err = ops.CancelAll(ctx, cluster.Selection{State: cluster.Pending})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 50, Changed: 50}, res)
	assert.Equal(t, cluster.Counts{}, counts(t, ops))
	for _, id := range other {
		assert.Equal(t, 0, runs.of(id), "canceled %s ran", id)
	}
}

// TestBulkActionsReachPausedKindsAndKeepDoneRecords cancels pending tasks
// of a paused kind (they are in no pending set, only their kind's index),
// keeps them as done records saying Canceled, and deletes those records.
func TestBulkActionsReachPausedKindsAndKeepDoneRecords(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ok := func(context.Context, cluster.Task) error { return nil }
	ops := newNode(t, srv, map[string]cluster.Handler{"a": ok, "b": ok}, cluster.WithKeepDone(time.Hour, 10000))
	require.NoError(t, ops.Pause(ctx, "a"))
	due := time.Now().Add(time.Hour)
	paused := scheduleMany(t, ops, "a", "a", 30, due)
	scheduleMany(t, ops, "b", "b", 20, due)

	res, err := ops.RunNowAll(ctx, cluster.Selection{State: cluster.Pending, Kind: "a"})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 30, Changed: 30}, res)
	info, _, err := ops.Get(ctx, paused[0])
	require.NoError(t, err)
	assert.True(t, info.Paused)
	assert.Equal(t, cluster.Pending, info.State, "a paused kind's task run now keeps waiting for Resume")

	res, err = ops.CancelAll(ctx, cluster.Selection{State: cluster.Pending})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 50, Changed: 50}, res)
	info, found, err := ops.Get(ctx, paused[0])
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, cluster.Done, info.State)
	require.NotEmpty(t, info.History)
	assert.Equal(t, cluster.OutcomeCanceled, info.History[len(info.History)-1].Outcome)

	res, err = ops.DeleteAll(ctx, cluster.Selection{State: cluster.Done, Kind: "b"})
	require.NoError(t, err)
	assert.Equal(t, cluster.BulkResult{Matched: 20, Changed: 20}, res)
	res, err = ops.CancelAll(ctx, cluster.Selection{State: cluster.Done})
	require.NoError(t, err, "canceling a done record removes it, as Cancel does")
	assert.Equal(t, cluster.BulkResult{Matched: 30, Changed: 30}, res)
	assert.Equal(t, cluster.Counts{}, counts(t, ops))
}

// TestBulkSelectionErrorsWrapTheSentinelsAndChangeNothing: a bad selection
// is refused before anything is read or changed.
func TestBulkSelectionErrorsWrapTheSentinelsAndChangeNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ok := func(context.Context, cluster.Task) error { return nil }
	n := newNode(t, srv, map[string]cluster.Handler{"k": ok})
	id, err := n.Schedule(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	bulk := func(f func(context.Context, cluster.Selection) (cluster.BulkResult, error), sel cluster.Selection) error {
		_, err := f(ctx, sel)
		return err
	}
	count := func(sel cluster.Selection) error { _, err := n.CountSelected(ctx, sel); return err }
	for name, err := range map[string]error{
		"no state":       bulk(n.CancelAll, cluster.Selection{}),
		"unknown state":  bulk(n.CancelAll, cluster.Selection{State: "late"}),
		"count no state": count(cluster.Selection{Kind: "k"}),
		"empty ID":       bulk(n.CancelAll, cluster.Selection{State: cluster.Pending, IDs: []string{id, ""}}),
		"bad kind":       bulk(n.CancelAll, cluster.Selection{State: cluster.Pending, Kind: "a b"}),
	} {
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
	}
	for name, err := range map[string]error{
		"retry pending":  bulk(n.RetryAll, cluster.Selection{State: cluster.Pending}),
		"delete pending": bulk(n.DeleteAll, cluster.Selection{State: cluster.Pending, IDs: []string{id}}),
		"delete running": bulk(n.DeleteAll, cluster.Selection{State: cluster.Running}),
		"run now dead":   bulk(n.RunNowAll, cluster.Selection{State: cluster.Dead}),
		"retry done":     bulk(n.RetryAll, cluster.Selection{State: cluster.Done}),
	} {
		assert.ErrorIs(t, err, cluster.ErrWrongState, name)
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
	}
	for name, err := range map[string]error{
		"cancel":   bulk(n.CancelAll, cluster.Selection{State: cluster.Pending, Kind: "nosuchkind"}),
		"count":    count(cluster.Selection{State: cluster.Pending, Kind: "nosuchkind"}),
		"pause":    n.Pause(ctx, "nosuchkind"),
		"resume":   n.Resume(ctx, "nosuchkind"),
		"periodic": n.Pause(ctx, "@nosuchtask"),
	} {
		assert.ErrorIs(t, err, cluster.ErrUnknownKind, name)
		assert.Contains(t, fmt.Sprint(err), "unknown kind", name)
	}
	info, found, err := n.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, cluster.Pending, info.State)
}

// TestPauseOfAKindDeclaredElsewhereWithNoTasksWorks: a kind that another
// live node handles, or a periodic task declares, may be paused before
// any task of it is stored; after its last task is gone and no node
// handles it, a kind stays known while it is paused, so it can be resumed.
func TestPauseOfAKindDeclaredElsewhereWithNoTasksWorks(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ok := func(context.Context, cluster.Task) error { return nil }
	worker := newNode(t, srv, map[string]cluster.Handler{"remote": ok})
	hourly := scheduler.TriggerFunc(func(after time.Time) time.Time { return after.Truncate(time.Hour).Add(time.Hour) })
	require.NoError(t, worker.Periodic("tick", hourly, ok))
	start(t, worker)
	ops := newNode(t, srv, nil)
	require.NoError(t, ops.Pause(ctx, "remote"))
	require.NoError(t, ops.Pause(ctx, "@tick"))
	require.NoError(t, worker.Stop(ctx))
	require.NoError(t, ops.Resume(ctx, "remote"), "a paused kind stays known")
	require.NoError(t, ops.Resume(ctx, "@tick"))
	assert.ErrorIs(t, ops.Resume(ctx, "remote"), cluster.ErrUnknownKind,
		"no node handles it, none of it is stored and it is not paused")
}

// TestCancelAllRacingClaimsCancelsOrRunsEachTaskOnce cancels every pending
// task while a started worker claims them as they fall due: a task the
// bulk cancel changed never runs, every other runs exactly once, and
// nothing is left.
func TestCancelAllRacingClaimsCancelsOrRunsEachTaskOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	runs := newRunCounter(2000)
	record := func(_ context.Context, task cluster.Task) error { runs.count(task.ID); return nil }
	worker := newNode(t, srv, map[string]cluster.Handler{"k": record}, cluster.WithConcurrency(16))
	start(t, worker)
	ops := newNode(t, srv, map[string]cluster.Handler{"k": record})
	// The tasks fall due one a millisecond from two seconds on; the bulk
	// cancel starts once the first has run, so it races the claims of the
	// others.
	begin := time.Now().Add(2 * time.Second)
	var ids []string
	for i := range 1500 {
		id, err := ops.Schedule(ctx, "k", nil, begin.Add(time.Duration(i)*time.Millisecond), cluster.WithID(fmt.Sprintf("c%04d", i)))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	recv(t, runs.ran, 30*time.Second, "the first run")
	res, err := ops.CancelAll(ctx, cluster.Selection{State: cluster.Pending, Kind: "k"})
	require.NoError(t, err)
	ran := len(ids) - res.Changed
	for range ran - 1 {
		recv(t, runs.ran, 30*time.Second, "a run of a task claimed before the cancel")
	}
	waitFor(t, 10*time.Second, "every run to end", func() bool { return counts(t, ops) == cluster.Counts{} })
	worker.StopNow()
	total := 0
	for _, id := range ids {
		c := runs.of(id)
		assert.LessOrEqual(t, c, 1, "runs of %s", id)
		total += c
	}
	assert.Equal(t, len(ids), total+res.Changed, "each task either canceled or run once")
	assert.LessOrEqual(t, res.Changed, res.Matched)
	t.Logf("%d canceled, %d claimed first (matched %d)", res.Changed, ran, res.Matched)
}

// TestRetryAllRacingAnotherRetryAllAndClaimsRunsEachTaskOnce: two nodes
// retry every dead task at once while a worker claims the retried ones:
// each task is retried by exactly one of them and runs exactly once.
func TestRetryAllRacingAnotherRetryAllAndClaimsRunsEachTaskOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	var healed atomic.Bool
	runs := newRunCounter(3000)
	h := func(_ context.Context, task cluster.Task) error {
		if !healed.Load() {
			return fmt.Errorf("broken: %w", cluster.ErrSkipRetry)
		}
		runs.count(task.ID)
		return nil
	}
	worker := newNode(t, srv, map[string]cluster.Handler{"k": h}, cluster.WithConcurrency(32))
	start(t, worker)
	a := newNode(t, srv, map[string]cluster.Handler{"k": h})
	b := newNode(t, srv, map[string]cluster.Handler{"k": h})
	ids := scheduleMany(t, a, "k", "r", 1200, time.Now())
	waitFor(t, 60*time.Second, "every task to die", func() bool { return counts(t, a).Dead == 1200 })
	healed.Store(true)

	var wg sync.WaitGroup
	results := make([]cluster.BulkResult, 2)
	errs := make([]error, 2)
	for i, n := range []*cluster.Node{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = n.RetryAll(ctx, cluster.Selection{State: cluster.Dead})
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	assert.Equal(t, 1200, results[0].Changed+results[1].Changed, "each task retried once: %+v", results)
	for range ids {
		recv(t, runs.ran, 30*time.Second, "a run of a retried task")
	}
	waitFor(t, 10*time.Second, "every run to end", func() bool { return counts(t, a) == cluster.Counts{} })
	worker.StopNow()
	for _, id := range ids {
		assert.Equal(t, 1, runs.of(id), "runs of %s", id)
	}
}

// TestBulkActionEndsOnTasksWhoseSetsDisagree: 600 tasks of one partition
// that are in its dead set and its lease set at once (a store an outside
// hand broke) fill every batch a bulk action reads; the action leaves them
// as they are and ends, rather than reading them forever.
func TestBulkActionEndsOnTasksWhoseSetsDisagree(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	rdb := client(t, srv)
	ops := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error { return nil }})
	// A task's partition is FNV-1a of its ID modulo the partitions (64).
	partOf := func(id string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(id))
		return h.Sum32() % cluster.DefaultPartitions
	}
	dead := cluster.PartitionKey("{scheduler}", "x", "dead")
	part := strings.TrimSuffix(dead, ":dead")
	pipe := rdb.Pipeline()
	var ids []string
	for i := 0; len(ids) < 600; i++ {
		id := fmt.Sprintf("x%d", i)
		if partOf(id) != partOf("x") {
			continue
		}
		ids = append(ids, id)
		pipe.HSet(ctx, part+":t:"+id, "kind", "k", "due", "1")
		pipe.ZAdd(ctx, dead, redis.Z{Score: 1, Member: id})
		pipe.ZAdd(ctx, part+":lease", redis.Z{Score: 1, Member: id})
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	res, err := ops.RetryAll(ctx, cluster.Selection{State: cluster.Dead})
	require.NoError(t, err)
	assert.Equal(t, 0, res.Changed)
	assert.LessOrEqual(t, res.Matched, 600, "each matched once at most")
	res, err = ops.CancelAll(ctx, cluster.Selection{State: cluster.Dead})
	require.NoError(t, err)
	assert.Equal(t, 0, res.Changed)
	assert.LessOrEqual(t, res.Matched, 600, "each matched once at most")
	n, err := rdb.ZCard(ctx, dead).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(600), n, "left as they were")
}
