package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Migrate is tested on keyspaces written the way the scripts of the
// versions before partitions wrote them (schedule, claim, complete, fail,
// cancel and pause, with and without WithKeepDone), in every state, on one
// redis-server and on a Redis Cluster.

// seededTask is a task written in the old layout, and where Migrate must
// put it.
type seededTask struct {
	id, kind string
	state    State
	score    float64
	fields   map[string]string
	// claimable is false for a pending task of a paused kind, which sits
	// in its kind's pending index alone.
	claimable bool
}

// seededMarker is a done marker written in the old layout.
type seededMarker struct {
	id, value string
	ttl       time.Duration
}

// oldKeyspace is what a test wrote in the old layout.
type oldKeyspace struct {
	prefix  string
	tasks   []seededTask
	stray   []seededTask // hashes in no set
	markers []seededMarker
	paused  []string
}

// counts are the tasks of ks by state.
func (ks *oldKeyspace) counts() map[State]int {
	out := make(map[State]int)
	for _, t := range ks.tasks {
		out[t.state]++
	}
	return out
}

// seedOld writes n tasks under prefix in the old layout, cycling through
// the states (pending, pending of the paused kind "report", running, dead,
// done record), with done markers for fixed IDs that ran, one pending task
// stored before the kind indexes, and one task hash in no set.
func seedOld(t testing.TB, rdb redis.UniversalClient, prefix string, n int) *oldKeyspace {
	t.Helper()
	ctx := context.Background()
	o := redisdriver.OldLayout{Prefix: prefix}
	ks := &oldKeyspace{prefix: prefix, paused: []string{"report"}}
	base := float64(time.Now().UnixMicro())
	pipe := rdb.Pipeline()
	flush := func() {
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		pipe = rdb.Pipeline()
	}
	pipe.SAdd(ctx, o.Paused(), "report")
	for i := range n {
		id := fmt.Sprintf("task-%d", i)
		kind := []string{"mail", "sms"}[i%2]
		f := map[string]string{"kind": kind, "payload": "p\x00\xff" + strconv.Itoa(i), "due": strconv.Itoa(int(base) + i),
			"max": "3", "attempt": "0", "lost": "0", "sum": "sum" + strconv.Itoa(i), "fixed": "0"}
		st := seededTask{id: id, kind: kind, fields: f, claimable: true}
		switch i % 5 {
		case 0: // redisdriver.ScheduleScript: make_pending
			st.state, st.score = Pending, base+float64(i)
		case 1: // a paused kind's pending task: in its kind's index alone
			st.kind, f["kind"] = "report", "report"
			st.state, st.score, st.claimable = Pending, base+float64(i), false
		case 2: // redisdriver.ClaimScript: the lease, owner token, next and start
			st.state, st.score = Running, base+30e6
			f["owner"], f["next"], f["start"] = "node-a:"+strconv.Itoa(i), strconv.Itoa(int(base)), strconv.Itoa(int(base)+5)
		case 3: // redisdriver.FailScript past the retries
			st.state, st.score = Dead, base-float64(i)
			f["attempt"], f["err"] = "4", "boom "+strconv.Itoa(i)
			f["hist"] = `[{"n":"node-a","s":1,"e":2,"o":"failed","x":"boom"}]`
		case 4: // redisdriver.CompleteScript with WithKeepDone and a fixed ID: record and marker
			st.state, st.score = Done, base-float64(i)
			f["fin"], f["fixed"] = strconv.Itoa(int(base)-i), "1"
			f["hist"] = `[{"n":"node-b","s":1,"e":2,"o":"succeeded","x":""}]`
			ks.markers = append(ks.markers, seededMarker{id: id, value: f["sum"], ttl: time.Hour})
			pipe.Set(ctx, o.Mark(id), f["sum"], time.Hour)
		}
		pipe.HSet(ctx, o.Task(id), f)
		if st.claimable {
			pipe.ZAdd(ctx, o.StateSet(string(st.state)), redis.Z{Score: st.score, Member: id})
		}
		pipe.ZAdd(ctx, o.KindIndex(string(st.state), st.kind), redis.Z{Score: st.score, Member: id})
		pipe.SAdd(ctx, o.Kinds(), st.kind)
		ks.tasks = append(ks.tasks, st)
		if i%1000 == 999 {
			flush()
		}
	}
	// A task stored before the kind indexes: in the pending set alone.
	old := seededTask{id: "before-indexes", kind: "mail", state: Pending, score: base, claimable: true,
		fields: map[string]string{"kind": "mail", "payload": "x", "due": strconv.Itoa(int(base)), "max": "3"}}
	pipe.HSet(ctx, o.Task(old.id), old.fields)
	pipe.ZAdd(ctx, o.StateSet(string(Pending)), redis.Z{Score: old.score, Member: old.id})
	ks.tasks = append(ks.tasks, old)
	// A hash in no set (no operation of the old version showed it).
	stray := seededTask{id: "stray", fields: map[string]string{"payload": "lost?"}}
	pipe.HSet(ctx, o.Task(stray.id), stray.fields)
	ks.stray = append(ks.stray, stray)
	// Done markers of fixed-ID tasks that ran and were deleted (no
	// WithKeepDone), one without expiry.
	for i := range 3 {
		m := seededMarker{id: "gone-" + strconv.Itoa(i), value: "sum-gone", ttl: time.Duration(i+1) * time.Hour}
		if i == 2 {
			m.ttl = 0
		}
		pipe.Set(ctx, o.Mark(m.id), m.value, m.ttl)
		ks.markers = append(ks.markers, m)
	}
	flush()
	return ks
}

// checkMigrated checks that every task of ks is in its partition of the
// p partitions, with its fields, state and scores, that every done marker
// moved with its time to live, that the paused kinds are paused in every
// partition, that nothing is left of the old layout and that the layout
// record is written.
func checkMigrated(t *testing.T, rdb redis.UniversalClient, ks *oldKeyspace, p int) {
	t.Helper()
	ctx := context.Background()
	st := keyspaceOf(rdb, ks.prefix, p)
	for _, task := range append(slices.Clone(ks.tasks), ks.stray...) {
		part := st.partOf(task.id)
		got, err := rdb.HGetAll(ctx, part.Task(task.id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, task.fields) {
			t.Fatalf("task %s in partition %d: fields %v, want %v", task.id, part.Index, got, task.fields)
		}
		for _, s := range driver.States {
			want := s == task.state && task.claimable && task.kind != ""
			checkScore(t, rdb, part.StateSet(string(s)), task.id, want, task.score)
			if task.kind != "" {
				checkScore(t, rdb, part.KindIndex(string(s), task.kind), task.id, s == task.state, task.score)
			}
		}
		if task.kind != "" {
			if ok, err := rdb.SIsMember(ctx, part.Kinds(), task.kind).Result(); err != nil || !ok {
				t.Fatalf("partition %d: kind %s not in its kinds (%v)", part.Index, task.kind, err)
			}
		}
	}
	for _, m := range ks.markers {
		key := st.partOf(m.id).Done(m.id)
		v, err := rdb.Get(ctx, key).Result()
		if err != nil || v != m.value {
			t.Fatalf("marker %s: %q, %v; want %q", key, v, err, m.value)
		}
		ttl := rdb.PTTL(ctx, key).Val()
		switch {
		case m.ttl == 0 && ttl != -1:
			t.Fatalf("marker %s without expiry: time to live %v", key, ttl)
		case m.ttl > 0 && (ttl <= m.ttl-time.Minute || ttl > m.ttl):
			t.Fatalf("marker %s: time to live %v, want about %v", key, ttl, m.ttl)
		}
	}
	for _, part := range st.parts {
		got, err := rdb.SMembers(ctx, part.Paused()).Result()
		slices.Sort(got)
		if err != nil || !slices.Equal(got, ks.paused) {
			t.Fatalf("partition %d paused %v (%v), want %v", part.Index, got, err, ks.paused)
		}
	}
	if left := oldKeys(t, rdb, ks.prefix, p); len(left) > 0 {
		t.Fatalf("keys left of the old layout: %v", left)
	}
	rec, err := rdb.HGetAll(ctx, layoutKey(ks.prefix)).Result()
	if err != nil || rec["version"] != layoutVersion || rec["partitions"] != strconv.Itoa(p) {
		t.Fatalf("layout record %v (%v)", rec, err)
	}
}

// checkScore checks that id is in the sorted set key at score, or not in
// it.
func checkScore(t *testing.T, rdb redis.UniversalClient, key, id string, in bool, score float64) {
	t.Helper()
	got, err := rdb.ZScore(context.Background(), key, id).Result()
	switch {
	case in && (err != nil || got != score):
		t.Fatalf("%s in %s: score %v (%v), want %v", id, key, got, err, score)
	case !in && !errors.Is(err, redis.Nil):
		t.Fatalf("%s in %s at %v (%v), want it absent", id, key, got, err)
	}
}

// oldKeys are the keys of the old layout under prefix: every key of the
// prefix but the cluster-wide records and the keys of its p partitions.
func oldKeys(t *testing.T, rdb redis.UniversalClient, prefix string, p int) []string {
	t.Helper()
	ks := keyspaceOf(rdb, prefix, p)
	var left []string
	err := redisdriver.ScanOld(context.Background(), rdb, prefix, redisdriver.GlobEscape(prefix)+":*", func(_ context.Context, keys []string) error {
	next:
		for _, k := range keys {
			for _, part := range ks.parts {
				if strings.HasPrefix(k, part.Prefix+":") {
					continue next
				}
			}
			if k != layoutKey(prefix) && k != (redisdriver.Keys{Prefix: prefix}).Nodes() {
				left = append(left, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// checkReport checks that r counts every task of ks by state.
func checkReport(t *testing.T, r MigrateReport, ks *oldKeyspace, p int) {
	t.Helper()
	c := ks.counts()
	if r.Partitions != p || r.Pending != c[Pending] || r.Running != c[Running] || r.Dead != c[Dead] || r.Done != c[Done] ||
		r.Unindexed != len(ks.stray) || r.Markers != len(ks.markers) || !slices.Equal(r.PausedKinds, ks.paused) {
		t.Fatalf("report %+v, want %v, %d unindexed, %d markers, paused %v", r, c, len(ks.stray), len(ks.markers), ks.paused)
	}
}

func TestMigrateMovesEveryTaskIntoItsPartition(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ks := seedOld(t, rdb, "{mig}", 500)
	r, err := Migrate(context.Background(), rdb, WithPrefix("{mig}"), WithPartitions(16), migrateOption{batch: 37})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, ks, 16)
	checkMigrated(t, rdb, ks, 16)
	// Once more: nothing to move, the record stays.
	r, err = Migrate(context.Background(), rdb, WithPrefix("{mig}"), WithPartitions(16))
	if err != nil || r.Tasks() != 0 || r.Markers != 0 {
		t.Fatalf("second run: %+v, %v", r, err)
	}
	checkMigrated(t, rdb, ks, 16)
	if err := keyspaceOf(rdb, "{mig}", 16).checkLayout(context.Background()); err != nil {
		t.Fatalf("a node of 16 partitions after the migration: %v", err)
	}
}

func TestMigrateWithoutAHashTag(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ks := seedOld(t, rdb, "plain*[x]", 50)
	r, err := Migrate(context.Background(), rdb, WithPrefix("plain*[x]"), WithPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, ks, 4)
	checkMigrated(t, rdb, ks, 4)
}

func TestMigrateOnARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	rdb := c.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ks := seedOld(t, rdb, "{migc}", 300)
	r, err := Migrate(context.Background(), rdb, WithPrefix("{migc}"), WithPartitions(8), migrateOption{batch: 50})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, ks, 8)
	checkMigrated(t, rdb, ks, 8)

	// Interrupted on the cluster too: a rerun completes.
	ks = seedOld(t, rdb, "{migi}", 120)
	migrateInterrupted(t, rdb, ks, 8)
	checkMigrated(t, rdb, ks, 8)
}

func TestMigrateInterruptedThenRerunLosesNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ks := seedOld(t, rdb, "{mig}", 200)
	migrateInterrupted(t, rdb, ks, 8)
	checkMigrated(t, rdb, ks, 8)
}

// migrateInterrupted runs Migrate on ks again and again, each run canceled
// after a few more pipelines than the last (anywhere: between reading and
// copying a round, between copying and deleting, in the middle of the
// partitions' transactions), checking after each that every task is
// still whole in the old layout or in its partition, until a run
// completes.
func migrateInterrupted(t *testing.T, rdb redis.UniversalClient, ks *oldKeyspace, p int) {
	t.Helper()
	var pipelines, cancelAt atomic.Int64
	var cancel atomic.Pointer[context.CancelFunc]
	rdb.AddHook(cancelHook{after: func() {
		if pipelines.Add(1) == cancelAt.Load() {
			(*cancel.Load())()
		}
	}})
	interrupted := 0
	for k := int64(1); ; k += 1 + k/4 {
		ctx, c := context.WithCancel(context.Background())
		cancel.Store(&c)
		pipelines.Store(0)
		cancelAt.Store(k)
		_, err := Migrate(ctx, rdb, WithPrefix(ks.prefix), WithPartitions(p), migrateOption{batch: 9})
		c()
		if err == nil {
			break
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: %v", k, err)
		}
		interrupted++
		checkWhole(t, rdb, ks, p)
	}
	if interrupted < 10 {
		t.Fatalf("only %d runs were interrupted", interrupted)
	}
	cancelAt.Store(0)
}

// checkWhole checks that every task of ks is whole (all its fields) in
// the old layout or in its partition.
func checkWhole(t *testing.T, rdb redis.UniversalClient, ks *oldKeyspace, p int) {
	t.Helper()
	ctx := context.Background()
	st := keyspaceOf(rdb, ks.prefix, p)
	o := redisdriver.OldLayout{Prefix: ks.prefix}
	for _, task := range ks.tasks {
		old := rdb.HGetAll(ctx, o.Task(task.id)).Val()
		moved := rdb.HGetAll(ctx, st.partOf(task.id).Task(task.id)).Val()
		if !maps.Equal(old, task.fields) && !maps.Equal(moved, task.fields) {
			t.Fatalf("task %s lost: old %v, moved %v", task.id, old, moved)
		}
	}
	for _, m := range ks.markers {
		if rdb.Exists(ctx, o.Mark(m.id)).Val()+rdb.Exists(ctx, st.partOf(m.id).Done(m.id)).Val() == 0 {
			t.Fatalf("marker %s lost", m.id)
		}
	}
}

// cancelHook calls after once each pipeline (or transaction) has been
// sent.
type cancelHook struct{ after func() }

func (h cancelHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h cancelHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h cancelHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.after()
		return err
	}
}

func TestMigrateRefusesWhileNodesAreLive(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	ks := seedOld(t, rdb, "{mig}", 10)
	now := float64(time.Now().UnixMicro())
	rdb.ZAdd(ctx, "{mig}:nodes", redis.Z{Score: now + 60e6, Member: "old-node"}, redis.Z{Score: now - 60e6, Member: "gone"})
	_, err := Migrate(ctx, rdb, WithPrefix("{mig}"), WithPartitions(4))
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "old-node") || strings.Contains(err.Error(), "gone") {
		t.Fatalf("Migrate with a live node: %v", err)
	}
	if len(oldKeys(t, rdb, "{mig}", 4)) == 0 {
		t.Fatal("the refused migration moved tasks")
	}
	r, err := Migrate(ctx, rdb, WithPrefix("{mig}"), WithPartitions(4), WithMigrateForce())
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, ks, 4)
	checkMigrated(t, rdb, ks, 4)
}

func TestMigrateRefusesAnotherNumberOfPartitions(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	rdb.HSet(ctx, "{mig}:layout", "version", "2", "partitions", "8")
	_, err := Migrate(ctx, rdb, WithPrefix("{mig}"), WithPartitions(4))
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "8") || !strings.Contains(err.Error(), "4") {
		t.Fatalf("Migrate to 4 partitions of a keyspace of 8: %v", err)
	}
	for _, opts := range [][]Option{{nil}, {WithPartitions(0)}, {WithPrefix("")}} {
		if _, err := Migrate(ctx, rdb, opts...); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Fatalf("Migrate %v: %v", opts, err)
		}
	}
	if _, err := Migrate(ctx, nil); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Migrate with a nil client: %v", err)
	}
}

func TestANodeRunsTheMigratedTasks(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	ks := seedOld(t, rdb, "{mig}", 50)
	if _, err := Migrate(ctx, rdb, WithPrefix("{mig}"), WithPartitions(8)); err != nil {
		t.Fatal(err)
	}
	want := make(map[string]bool)
	for _, task := range ks.tasks {
		if task.state == Pending && task.claimable {
			want[task.id] = true
		}
	}
	ran := make(chan string, len(ks.tasks))
	n, err := New(rdb, WithPrefix("{mig}"), WithPartitions(8), WithLease(2*time.Second),
		WithWindow(5*time.Second), WithSweepInterval(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.StopNow)
	for _, kind := range []string{"mail", "sms", "report"} {
		if err := n.Handle(kind, func(_ context.Context, task Task) error {
			ran <- task.ID
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range want {
		select {
		case id := <-ran:
			if !want[id] {
				t.Fatalf("ran %s, which was not a claimable pending task", id)
			}
			delete(want, id)
		case <-time.After(30 * time.Second):
			t.Fatalf("the migrated tasks %v did not run", want)
		}
	}
}
