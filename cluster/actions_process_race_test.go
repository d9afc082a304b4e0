package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The operators' actions raced against claims made by another OS process:
// a replica (the test binary re-executed, role "ops") claims and runs the
// tasks as they fall due, while this process acts on them through a node
// that is never started. Every run and every action that succeeded is
// written to one Redis list, the ledger, so Redis orders them all.

// opsRole is the replica role of these tests.
const opsRole = "ops"

// Kinds of the ops replica. Each run first appends "start <id>" to the
// ledger <prefix>:ledger.
const (
	// opsKind runs and succeeds.
	opsKind = "k"
	// opsFlaky fails at once (ErrSkipRetry: dead) on the first run of each
	// ID, and succeeds after.
	opsFlaky = "flaky"
)

// opsReplicaMain runs the ops replica until SIGTERM; with
// CLUSTER_TEST_KEEP_DONE set it keeps done records.
func opsReplicaMain() int {
	prefix := os.Getenv("CLUSTER_TEST_PREFIX")
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("CLUSTER_TEST_REDIS")})
	defer rdb.Close()
	opts := append(testOptions(), cluster.WithPrefix(prefix), cluster.WithLease(longLease), cluster.WithConcurrency(8))
	if os.Getenv("CLUSTER_TEST_KEEP_DONE") != "" {
		opts = append(opts, cluster.WithKeepDone(time.Hour, 100000))
	}
	n, err := cluster.New(rdb, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ledger := func(ctx context.Context, t cluster.Task) error {
		return rdb.RPush(ctx, prefix+":ledger", "start "+t.ID).Err()
	}
	handlers := map[string]cluster.Handler{
		opsKind: ledger,
		opsFlaky: func(ctx context.Context, t cluster.Task) error {
			if err := ledger(ctx, t); err != nil {
				return err
			}
			first, err := rdb.HSetNX(ctx, prefix+":failed", t.ID, 1).Result()
			if err != nil {
				return err
			}
			if first {
				return fmt.Errorf("first run fails: %w", cluster.ErrSkipRetry)
			}
			return nil
		},
	}
	for kind, h := range handlers {
		if err := n.Handle(kind, h); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := n.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	<-sigs
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
		return 1
	}
	return 0
}

// processRace is one race: a replica process running the tasks, and a
// producer node of this process acting on them.
type processRace struct {
	prefix  string
	rdb     *redis.Client
	ops     *cluster.Node
	replica *replica
	ids     []string
	due     map[string]time.Time
}

// newProcessRace starts an ops replica (keeping done records if keepDone)
// and stores 40 tasks of kind, due one every 10 ms from now, so that the
// replica claims them while the test acts on them.
func newProcessRace(t *testing.T, kind string, keepDone bool) *processRace {
	t.Helper()
	return newProcessRaceDue(t, kind, keepDone, func(i int) time.Duration { return time.Duration(i) * 10 * time.Millisecond })
}

// newProcessRaceDue is newProcessRace with the i-th task due after(i)
// from now.
func newProcessRaceDue(t *testing.T, kind string, keepDone bool, after func(i int) time.Duration) *processRace {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	r := &processRace{prefix: "{race}", rdb: client(t, srv), due: map[string]time.Time{}}
	env := []string{replicaEnv + "=" + opsRole}
	if keepDone {
		env = append(env, "CLUSTER_TEST_KEEP_DONE=1")
	}
	r.replica = startReplica(t, srv, r.prefix, longLease, env...)
	r.ops = newNode(t, srv, nil, cluster.WithPrefix(r.prefix))
	start := time.Now()
	for i := range 40 {
		due := start.Add(after(i)).Truncate(time.Microsecond)
		id, err := r.ops.Schedule(context.Background(), kind, nil, due, cluster.WithID(fmt.Sprintf("t%02d", i)))
		require.NoError(t, err)
		r.ids = append(r.ids, id)
		r.due[id] = due
	}
	return r
}

// latestFirst returns the IDs latest due first: acting in that order, the
// action meets the replica's claims somewhere in the middle, whatever the
// speed of the machine, so some tasks are acted on first and some are
// claimed first.
func (r *processRace) latestFirst() []string {
	ids := slices.Clone(r.ids)
	slices.Reverse(ids)
	return ids
}

// mark appends "<what> <id>" to the ledger, after an action on id
// succeeded.
func (r *processRace) mark(t *testing.T, what, id string) {
	t.Helper()
	require.NoError(t, r.rdb.RPush(context.Background(), r.prefix+":ledger", what+" "+id).Err())
}

// ledger reads the ledger: for each ID, its entries in order.
func (r *processRace) ledger(t *testing.T) map[string][]string {
	t.Helper()
	entries, err := r.rdb.LRange(context.Background(), r.prefix+":ledger", 0, -1).Result()
	require.NoError(t, err)
	out := map[string][]string{}
	for _, e := range entries {
		what, id, _ := strings.Cut(e, " ")
		out[id] = append(out[id], what)
	}
	return out
}

// starts counts the runs of each ID in the ledger.
func (r *processRace) starts(t *testing.T) int {
	t.Helper()
	n := 0
	for _, entries := range r.ledger(t) {
		for _, e := range entries {
			if e == "start" {
				n++
			}
		}
	}
	return n
}

// waitStarts waits until the ledger holds n runs in all.
func (r *processRace) waitStarts(t *testing.T, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("%d runs in the ledger", n), func() bool { return r.starts(t) >= n })
}

// until calls action until it succeeds, failing t on an error other than a
// refusal (ErrWrongState, ErrNotFound).
func until(t *testing.T, what string, action func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := action()
		if err == nil {
			return
		}
		if !errors.Is(err, cluster.ErrWrongState) && !errors.Is(err, cluster.ErrNotFound) {
			t.Fatalf("%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still refused after 30 s: %v", what, err)
		}
	}
}

// refusedOr fails t unless err is nil or a refusal; it reports success.
func refusedOr(t *testing.T, err error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, cluster.ErrWrongState) && !errors.Is(err, cluster.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestRunNowRacingAnotherProcessRunsEachTaskExactlyOnce(t *testing.T) {
	r := newProcessRace(t, opsKind, false)
	ctx := context.Background()
	moved := 0
	for _, id := range r.latestFirst() {
		if refusedOr(t, r.ops.RunNow(ctx, id)) {
			moved++
		}
	}
	r.waitStarts(t, len(r.ids))
	r.replica.stop(t)
	led := r.ledger(t)
	for _, id := range r.ids {
		assert.Equal(t, []string{"start"}, led[id], "task %s", id)
	}
	t.Logf("%d brought forward, %d refused as claimed first", moved, len(r.ids)-moved)
}

func TestRescheduleRacingAnotherProcessMovesOrIsRefused(t *testing.T) {
	r := newProcessRace(t, opsKind, false)
	ctx := context.Background()
	later := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	moved := map[string]bool{}
	for _, id := range r.latestFirst() {
		if refusedOr(t, r.ops.Reschedule(ctx, id, later)) {
			moved[id] = true
			r.mark(t, "moved", id)
		}
	}
	r.waitStarts(t, len(r.ids)-len(moved))
	r.replica.stop(t)
	led := r.ledger(t)
	for _, id := range r.ids {
		if moved[id] {
			assert.Equal(t, []string{"moved"}, led[id], "task %s moved an hour away", id)
			info := get(t, r.ops, id)
			assert.Equal(t, cluster.Pending, info.State)
			assert.Equal(t, later, info.Due)
		} else {
			assert.Equal(t, []string{"start"}, led[id], "task %s refused: claimed first", id)
		}
	}
	t.Logf("%d moved, %d refused as claimed first", len(moved), len(r.ids)-len(moved))
}

func TestCancelRacingAnotherProcessNeverLetsARunStartAfterIt(t *testing.T) {
	r := newProcessRace(t, opsKind, false)
	ctx := context.Background()
	res := map[string]cluster.Cancellation{}
	for _, id := range r.latestFirst() {
		c, err := r.ops.Cancel(ctx, id)
		require.NoError(t, err)
		res[id] = c
		if c.Removed {
			r.mark(t, "canceled", id)
		}
	}
	// Every task was canceled or had run: a task not removed had run to
	// its end. A last task, run after every claim the replica could have
	// made of the others, shows none started after its cancel.
	_, err := r.ops.Schedule(ctx, opsKind, nil, time.Now(), cluster.WithID("last"))
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the last task", func() bool { return len(r.ledger(t)["last"]) == 1 })
	r.replica.stop(t)
	led := r.ledger(t)
	kinds := map[string]int{}
	for _, id := range r.ids {
		c := res[id]
		switch {
		case !c.Removed:
			kinds["completed first"]++
			assert.Equal(t, []string{"start"}, led[id], "task %s had completed", id)
		case c.WasRunning:
			// Claimed before the cancel: its handler may append its
			// start before or after the mark, or never start when the
			// cancel reached the node between its claim and the
			// handler's call; it runs at most once.
			kinds["canceled while running"]++
			if len(led[id]) == 1 {
				assert.Equal(t, []string{"canceled"}, led[id], "task %s canceled while claimed, before its start", id)
			} else {
				assert.ElementsMatch(t, []string{"start", "canceled"}, led[id], "task %s canceled while running", id)
			}
		default:
			kinds["canceled while pending"]++
			assert.Equal(t, []string{"canceled"}, led[id], "task %s canceled while pending", id)
		}
	}
	t.Logf("%v", kinds)
}

func TestRetryRacingAnotherProcessRunsTheRetriedTaskOnce(t *testing.T) {
	r := newProcessRace(t, opsFlaky, false)
	ctx := context.Background()
	// Two goroutines retry each task as soon as it is dead: exactly one
	// Retry succeeds per task.
	var wg sync.WaitGroup
	var mu sync.Mutex // guards wins
	wins := map[string]int{}
	for range 2 {
		wg.Go(func() {
			for _, id := range r.ids {
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					info, ok, err := r.ops.Get(ctx, id)
					if err != nil || !ok || info.State != cluster.Dead && len(info.History) > 0 {
						break // retried by the other goroutine, or gone
					}
					if err := r.ops.Retry(ctx, id); err == nil {
						mu.Lock()
						wins[id]++
						mu.Unlock()
						break
					} else if !errors.Is(err, cluster.ErrWrongState) && !errors.Is(err, cluster.ErrNotFound) {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	r.waitStarts(t, 2*len(r.ids))
	r.replica.stop(t)
	led := r.ledger(t)
	for _, id := range r.ids {
		assert.Equal(t, 1, wins[id], "task %s retried %d times", id, wins[id])
		assert.Equal(t, []string{"start", "start"}, led[id], "task %s: the failed run and the retry", id)
		_, ok, err := r.ops.Get(ctx, id)
		require.NoError(t, err)
		assert.False(t, ok, "task %s completed after its retry", id)
	}
}

func TestDeleteRacingAnotherProcessRemovesOnlyDoneRecords(t *testing.T) {
	r := newProcessRace(t, opsKind, true)
	ctx := context.Background()
	for _, id := range r.ids {
		until(t, "delete "+id, func() error { return r.ops.Delete(ctx, id) })
		r.mark(t, "deleted", id)
	}
	r.replica.stop(t)
	led := r.ledger(t)
	for _, id := range r.ids {
		assert.Equal(t, []string{"start", "deleted"}, led[id], "task %s: deleted once done, never before its run", id)
		_, ok, err := r.ops.Get(ctx, id)
		require.NoError(t, err)
		assert.False(t, ok)
	}
	assert.Equal(t, cluster.Counts{}, counts(t, r.ops))
}

func TestPauseRacingAnotherProcessStopsEveryClaimUntilResume(t *testing.T) {
	// The first ten come due one every 10 ms, so that the pause, made
	// after five runs, races the replica's claims; the other thirty come
	// due 3 s later, so that the pause holds some task however slow the
	// machine is between the fifth run and the pause.
	r := newProcessRaceDue(t, opsKind, true, func(i int) time.Duration {
		d := time.Duration(i) * 10 * time.Millisecond
		if i >= 10 {
			d += 3 * time.Second
		}
		return d
	})
	ctx := context.Background()
	r.waitStarts(t, 5)
	require.NoError(t, r.ops.Pause(ctx, opsKind))
	paused, err := r.rdb.Time(ctx).Result()
	require.NoError(t, err)
	// Every task is due by now; the replica claims nothing of the kind.
	// A task of another kind due after them all shows it is still
	// claiming.
	waitFor(t, 30*time.Second, "the last task due", func() bool { return time.Since(r.due[r.ids[len(r.ids)-1]]) > 0 })
	_, err = r.ops.Schedule(ctx, opsFlaky, nil, time.Now(), cluster.WithID("other"))
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "the other kind's run", func() bool { return len(r.ledger(t)["other"]) == 1 })
	pendingWhilePaused := counts(t, r.ops).Pending
	resumed, err := r.rdb.Time(ctx).Result()
	require.NoError(t, err)
	require.NoError(t, r.ops.Resume(ctx, opsKind))
	r.waitStarts(t, len(r.ids)+1)
	waitFor(t, 30*time.Second, "every task done", func() bool { return counts(t, r.ops).Done == int64(len(r.ids)) })
	r.replica.stop(t)

	led := r.ledger(t)
	afterResume := 0
	for _, id := range r.ids {
		assert.Equal(t, []string{"start"}, led[id], "task %s runs exactly once", id)
		info := get(t, r.ops, id)
		require.Len(t, info.History, 1)
		claimed := info.History[0].Start
		if claimed.After(paused) && claimed.Before(resumed) {
			t.Errorf("task %s claimed at %v, while paused (%v to %v)", id, claimed, paused, resumed)
		}
		if claimed.After(resumed) {
			afterResume++
		}
		assert.Equal(t, r.due[id], info.Due, "task %s keeps its due time", id)
	}
	assert.Equal(t, pendingWhilePaused, int64(afterResume), "the tasks pending while paused ran after the resume")
	assert.NotZero(t, afterResume, "the pause held no task; the test proves nothing")
	t.Logf("%d tasks ran before the pause, %d after the resume", len(r.ids)-afterResume, afterResume)
}
