package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// These tests store tasks straight in the partitions' keys, as the
// scripts of the task lifecycle write them, so that the operations over
// the partitions are checked on many partitions and many ties whatever
// the lifecycle does.

// seedTask stores task id of kind in state at score, in its partition.
// store is a node's Redis keyspace, for the tests that seed tasks
// straight into its keys.
type store struct {
	rdb   redis.UniversalClient
	parts []redisdriver.Partition
}

// partOf is the partition of task id.
func (s store) partOf(id string) redisdriver.Partition {
	return s.parts[partitionIndex(id, len(s.parts))]
}

// seedStore is n's keyspace.
func (n *Node) seedStore() store {
	return store{rdb: n.rdb, parts: redisdriver.PartitionsOf(n.cfg.prefix, n.cfg.partitions)}
}

func seedTask(t *testing.T, st store, id, kind string, state State, score int64) {
	t.Helper()
	ctx := context.Background()
	p := st.partOf(id)
	pipe := st.rdb.Pipeline()
	pipe.HSet(ctx, p.Task(id), "kind", kind, "payload", "p", "due", strconv.FormatInt(score, 10),
		"max", "3", "attempt", "0", "lost", "0", "sum", "x", "fixed", "1")
	z := redis.Z{Score: float64(score), Member: id}
	pipe.ZAdd(ctx, p.StateSet(string(state)), z)
	pipe.ZAdd(ctx, p.KindIndex(string(state), kind), z)
	pipe.SAdd(ctx, p.Kinds(), kind)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// listAll pages through q with pages of size and returns the IDs listed.
func listAll(t *testing.T, n *Node, q ListQuery, size int) []string {
	t.Helper()
	q.Limit = size
	var ids []string
	for {
		page, err := n.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range page.Tasks {
			if info.State != q.State {
				t.Fatalf("%s listed as %s in a listing of %s", info.ID, info.State, q.State)
			}
			ids = append(ids, info.ID)
		}
		if page.Next == "" {
			return ids
		}
		q.Cursor = page.Next
	}
}

// seeded is a task seedOps stored.
type seeded struct {
	id, kind string
	score    int64
}

// seedOps stores count tasks in state, of kinds "a", "b" and "c" in turn,
// three to a score so that pages cross ties, and returns them in the
// listing's order.
func seedOps(t *testing.T, st store, state State, count int, base int64) []seeded {
	t.Helper()
	var out []seeded
	for i := range count {
		s := seeded{id: fmt.Sprintf("%s-%04d", state, i), kind: string(rune('a' + i%3)), score: base + int64(i/3)}
		seedTask(t, st, s.id, s.kind, state, s.score)
		out = append(out, s)
	}
	desc := state == Dead || state == Done
	slices.SortFunc(out, func(a, b seeded) int {
		c := cmpInt(a.score, b.score)
		if c == 0 {
			c = strings.Compare(a.id, b.id)
		}
		if desc {
			return -c
		}
		return c
	})
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func idsOf(tasks []seeded, kind string) []string {
	var ids []string
	for _, s := range tasks {
		if kind == "" || s.kind == kind {
			ids = append(ids, s.id)
		}
	}
	return ids
}

// newOpsNode is a node, never started, on rdb with partitions partitions
// under prefix.
func newOpsNode(t *testing.T, rdb redis.UniversalClient, prefix string, partitions int) *Node {
	t.Helper()
	n, err := New(rdb, WithPrefix(prefix), WithPartitions(partitions))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestListMergesThePartitionsInOrderAcrossPagesAndTies(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	listMerges(t, newOpsNode(t, rdb, DefaultPrefix, 7))
}

func TestActionsFindTheTaskInItsPartition(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	actionsFindTheTask(t, newOpsNode(t, rdb, DefaultPrefix, 5), 3000) // 600 a partition: more than a batch
}

// TestOperationsOnARedisCluster runs the operations through a cluster
// client on a three-master Redis Cluster, whose masters each hold a third
// of the partitions: every script's keys must be in one slot, and every
// pipeline over the partitions is split by master.
func TestOperationsOnARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	rdb := c.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	t.Run("list, counts, get, pause", func(t *testing.T) {
		listMerges(t, newOpsNode(t, rdb, "{list}", DefaultPartitions))
	})
	t.Run("actions and purge", func(t *testing.T) {
		actionsFindTheTask(t, newOpsNode(t, rdb, "{actions}", DefaultPartitions), 1000)
	})
	t.Run("scheduled tasks", func(t *testing.T) {
		n := newOpsNode(t, rdb, "{scheduled}", DefaultPartitions)
		ctx := context.Background()
		due := time.Now().Add(time.Hour)
		var ids []string
		for i := range 50 {
			id, err := n.Schedule(ctx, "k", []byte("p"), due.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := n.Pause(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := n.Reschedule(ctx, ids[49], due.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		want := append([]string{ids[49]}, ids[:49]...)
		if got := listAll(t, n, ListQuery{State: Pending}, 8); !slices.Equal(got, want) {
			t.Fatalf("listed %v, want %v", got, want)
		}
		if info, ok, err := n.Get(ctx, ids[0]); err != nil || !ok || !info.Paused {
			t.Fatalf("get: %+v, %v, %v", info, ok, err)
		}
		if err := n.Resume(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if c, err := n.Counts(ctx); err != nil || c != (Counts{Pending: 50}) {
			t.Fatalf("counts %+v, %v", c, err)
		}
	})
}

// listMerges lists the tasks of every state, by kind and not, in pages of
// several sizes, and counts them, with a kind paused and resumed.
func listMerges(t *testing.T, n *Node) {
	base := time.Now().Add(time.Hour).UnixMicro()
	want := map[State][]seeded{}
	for _, state := range []State{Pending, Running, Dead, Done} {
		want[state] = seedOps(t, n.seedStore(), state, 200, base)
	}
	for _, state := range []State{Pending, Running, Dead, Done} {
		for _, kind := range []string{"", "b"} {
			for _, size := range []int{1, 7, 100, MaxPage} {
				got := listAll(t, n, ListQuery{State: state, Kind: kind}, size)
				if !slices.Equal(got, idsOf(want[state], kind)) {
					t.Fatalf("%s kind %q pages of %d: got %v, want %v", state, kind, size, got, idsOf(want[state], kind))
				}
			}
		}
	}

	// A paused kind's pending tasks are in its index only; the listing
	// of every pending task still holds them, in order.
	ctx := context.Background()
	if err := n.Pause(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{3, 100} {
		if got := listAll(t, n, ListQuery{State: Pending}, size); !slices.Equal(got, idsOf(want[Pending], "")) {
			t.Fatalf("paused, pages of %d: got %v", size, got)
		}
	}
	c, err := n.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counts{Pending: 200, Running: 200, Dead: 200, Done: 200}) {
		t.Fatalf("counts %+v", c)
	}
	total, kinds, err := n.CountsByKind(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if total != c || len(kinds) != 3 || kinds[0].Kind != "a" || !kinds[0].Paused || kinds[1].Paused ||
		kinds[0].Counts != (Counts{Pending: 67, Running: 67, Dead: 67, Done: 67}) {
		t.Fatalf("counts by kind %+v, %+v", total, kinds)
	}
	paused, err := n.PausedKinds(ctx)
	if err != nil || !slices.Equal(paused, []string{"a"}) {
		t.Fatalf("paused kinds %v, %v", paused, err)
	}
	info, ok, err := n.Get(ctx, want[Pending][0].id)
	if err != nil || !ok || info.State != Pending || info.Kind != want[Pending][0].kind {
		t.Fatalf("get: %+v %v %v", info, ok, err)
	}
	if err := n.Resume(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, n, ListQuery{State: Pending}, 10); !slices.Equal(got, idsOf(want[Pending], "")) {
		t.Fatalf("resumed: got %v", got)
	}
}

// actionsFindTheTask runs each action on tasks of several partitions and
// purges dead dead tasks.
func actionsFindTheTask(t *testing.T, n *Node, dead int) {
	ctx := context.Background()
	now := time.Now()
	seedTask(t, n.seedStore(), "p", "k", Pending, now.Add(time.Hour).UnixMicro())
	seedTask(t, n.seedStore(), "d", "k", Dead, now.Add(-time.Hour).UnixMicro())
	seedTask(t, n.seedStore(), "x", "k2", Done, now.Add(-time.Hour).UnixMicro())

	if err := n.RunNow(ctx, "d"); !errors.Is(err, ErrWrongState) {
		t.Fatalf("run now of a dead task: %v", err)
	}
	if err := n.RunNow(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("run now of no task: %v", err)
	}
	due := now.Add(2 * time.Hour).Truncate(time.Microsecond)
	if err := n.Reschedule(ctx, "p", due); err != nil {
		t.Fatal(err)
	}
	info, _, err := n.Get(ctx, "p")
	if err != nil || !info.Due.Equal(due) {
		t.Fatalf("rescheduled: %+v, %v", info, err)
	}
	if err := n.Retry(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if info, _, err := n.Get(ctx, "d"); err != nil || info.State != Pending {
		t.Fatalf("retried: %+v, %v", info, err)
	}
	if err := n.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := n.Get(ctx, "x"); err != nil || ok {
		t.Fatalf("deleted: %v, %v", ok, err)
	}
	for i := range dead {
		seedTask(t, n.seedStore(), "dead-"+strconv.Itoa(i), "k"+strconv.Itoa(i%2), Dead, now.Add(-time.Minute).UnixMicro())
	}
	seedTask(t, n.seedStore(), "young", "k", Dead, now.Add(time.Minute).UnixMicro())
	removed, err := n.Purge(ctx, now)
	if err != nil || removed != dead {
		t.Fatalf("purged %d, %v", removed, err)
	}
	c, err := n.Counts(ctx)
	if err != nil || c != (Counts{Pending: 2, Dead: 1}) {
		t.Fatalf("counts after the purge %+v, %v", c, err)
	}
}
