package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The multi-process tests re-execute the test binary as replicas: separate
// OS processes that share one redis-server, as a deployment would.

// replicaEnv selects the replica main in a re-executed test binary.
const replicaEnv = "CLUSTER_TEST_REPLICA"

// Kinds the replica handles.
const (
	// kindCount counts its runs in the hash <prefix>:runs.
	kindCount = "count"
	// kindHold records its start in the list <prefix>:started; its first
	// run then holds until the replica dies; a later run completes and
	// records which replica ran it in <prefix>:ranby.
	kindHold = "hold"
)

// replicaMain runs one replica until SIGTERM, then stops it gracefully.
func replicaMain(role string) int {
	if role == opsRole {
		return opsReplicaMain()
	}
	if role != "worker" {
		fmt.Fprintln(os.Stderr, "unknown replica role", role)
		return 2
	}
	addr, prefix := os.Getenv("CLUSTER_TEST_REDIS"), os.Getenv("CLUSTER_TEST_PREFIX")
	lease, err := time.ParseDuration(os.Getenv("CLUSTER_TEST_LEASE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "CLUSTER_TEST_LEASE:", err)
		return 2
	}
	var skew time.Duration
	if v := os.Getenv("CLUSTER_TEST_SKEW"); v != "" {
		if skew, err = time.ParseDuration(v); err != nil {
			fmt.Fprintln(os.Stderr, "CLUSTER_TEST_SKEW:", err)
			return 2
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	n, err := cluster.New(rdb, cluster.WithPrefix(prefix),
		cluster.WithClock(skewedClock{scheduler.SystemClock(), skew}),
		cluster.WithLease(lease),
		cluster.WithWindow(5*time.Second),
		cluster.WithSweepInterval(time.Second),
		cluster.WithConcurrency(16),
		cluster.WithBackoff(func(int) time.Duration { return 5 * time.Millisecond }))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pid := strconv.Itoa(os.Getpid())
	must := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	must(n.Handle(kindCount, func(ctx context.Context, t cluster.Task) error {
		return rdb.HIncrBy(ctx, prefix+":runs", t.ID, 1).Err()
	}))
	must(n.Handle(kindHold, func(ctx context.Context, t cluster.Task) error {
		if err := rdb.RPush(ctx, prefix+":started", pid).Err(); err != nil {
			return err
		}
		if t.Attempt+t.Lost == 0 {
			<-ctx.Done()
			return ctx.Err()
		}
		if err := rdb.HSet(ctx, prefix+":ranby", t.ID, pid).Err(); err != nil {
			return err
		}
		return rdb.HIncrBy(ctx, prefix+":runs", t.ID, 1).Err()
	}))
	if v := os.Getenv("CLUSTER_TEST_PERIOD"); v != "" {
		period, err := time.ParseDuration(v)
		must(err)
		// The periodic task counts its runs per occurrence in
		// <prefix>:occ. Each occurrence runs (MisfireRunEach): on a
		// busy machine a claim a period late would coalesce.
		must(n.Periodic("report", everyTick(period), func(ctx context.Context, t cluster.Task) error {
			return rdb.HIncrBy(ctx, prefix+":occ", t.Due.UTC().Format(time.RFC3339Nano), 1).Err()
		}, cluster.WithMisfire(cluster.MisfireRunEach)))
	}
	if v := os.Getenv("CLUSTER_TEST_SLOW"); v != "" {
		period, err := time.ParseDuration(v)
		must(err)
		// Each run takes three periods and counts the runs going on
		// at once in every replica in <prefix>:inflight, the most ever
		// in <prefix>:most, and its runs in <prefix>:slowruns.
		must(n.Periodic("slow", everyTick(period), func(ctx context.Context, t cluster.Task) error {
			if err := mostScript.Run(ctx, rdb, []string{prefix + ":inflight", prefix + ":most"}).Err(); err != nil {
				return err
			}
			defer rdb.Decr(context.Background(), prefix+":inflight")
			time.Sleep(3 * period)
			return rdb.Incr(ctx, prefix+":slowruns").Err()
		}))
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	must(n.Start(context.Background()))
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

// replica is a replica process started by a test.
type replica struct {
	cmd    *exec.Cmd
	done   chan struct{} // closed once the process has been waited for
	stderr *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for the writer goroutine of exec.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Replica leases. The tests that kill replicas wait for a lease to expire,
// so theirs is short; the others have a long one, so that the multi-second
// stalls of a loaded CI box (2 CPUs, -race, other packages' tests) never
// expire a live run's lease, which would legitimately run it twice.
const (
	shortLease = 3 * time.Second
	longLease  = 20 * time.Second
)

// startReplica starts a replica process on srv with prefix and lease and
// waits until it has started its node; it is killed when t ends if still
// running.
// startReplicas starts n replica processes with the same settings.
func startReplicas(t *testing.T, srv *redistest.Server, prefix string, lease time.Duration, n int) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range rs {
		rs[i] = startReplica(t, srv, prefix, lease)
	}
	return rs
}

func startReplica(t *testing.T, srv *redistest.Server, prefix string, lease time.Duration, env ...string) *replica {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"=worker", "CLUSTER_TEST_REDIS="+srv.Addr, "CLUSTER_TEST_PREFIX="+prefix,
		"CLUSTER_TEST_LEASE="+lease.String())
	cmd.Env = append(cmd.Env, env...)
	r := &replica{cmd: cmd, done: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = r.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := sc.Scan() && sc.Text() == "ready"
		ready <- ok
		for sc.Scan() {
		}
		_ = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("replica %s stderr:\n%s", r.pid(), r.stderr)
		}
	})
	select {
	case ok := <-ready:
		if !ok {
			r.kill()
			t.Fatalf("replica failed to start: %s", r.stderr)
		}
	case <-time.After(30 * time.Second):
		r.kill()
		t.Fatalf("replica did not start: %s", r.stderr)
	}
	return r
}

func (r *replica) pid() string { return strconv.Itoa(r.cmd.Process.Pid) }

// kill ends the replica with SIGKILL, as a crash would, and waits for it.
func (r *replica) kill() {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

// stop ends the replica with SIGTERM (a graceful Stop) and checks it exited
// cleanly.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	r.wait(t)
}

// stopAll stops every replica at once, gracefully.
func stopAll(t *testing.T, rs []*replica) {
	t.Helper()
	for _, r := range rs {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, r := range rs {
		r.wait(t)
	}
}

// wait waits for the replica to exit and checks it exited cleanly.
func (r *replica) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		r.kill()
		t.Fatalf("replica did not stop: %s", r.stderr)
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("replica exited with %d: %s", code, r.stderr)
	}
}

// scheduleCounts stores n count tasks through a producer node (never
// started), due evenly over [from, from+spread), from 8 goroutines.
func scheduleCounts(t *testing.T, producer *cluster.Node, n int, from time.Time, spread time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < n; i += 8 {
				due := from.Add(spread * time.Duration(i) / time.Duration(n))
				if _, err := producer.Schedule(context.Background(), kindCount, nil, due, cluster.WithID("task-"+strconv.Itoa(i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// producerNode returns a node that only stores tasks under prefix.
func producerNode(t *testing.T, srv *redistest.Server, prefix string) *cluster.Node {
	t.Helper()
	nop := func(context.Context, cluster.Task) error { return nil }
	return newNode(t, srv, map[string]cluster.Handler{kindCount: nop, kindHold: nop}, cluster.WithPrefix(prefix))
}

// checkRunOnce checks that each of the n count tasks ran exactly once and
// the store is empty.
func checkRunOnce(t *testing.T, rdb *redis.Client, producer *cluster.Node, prefix string, n int) {
	t.Helper()
	runs, err := rdb.HGetAll(context.Background(), prefix+":runs").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		t.Fatalf("%d distinct tasks ran, want %d", len(runs), n)
	}
	for i := range n {
		if c := runs["task-"+strconv.Itoa(i)]; c != "1" {
			t.Errorf("task-%d ran %q times, want 1", i, c)
		}
	}
	if c := counts(t, producer); c != (cluster.Counts{}) {
		t.Errorf("store not empty after every task ran: %+v", c)
	}
}

func TestTenThousandTasksAcrossThreeReplicaProcessesEachRunOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix, n = "{tenk}", 10000
	rdb := client(t, srv)
	replicas := startReplicas(t, srv, prefix, longLease, 3)
	producer := producerNode(t, srv, prefix)
	scheduleCounts(t, producer, n, time.Now().Add(500*time.Millisecond), 2*time.Second)
	waitFor(t, 120*time.Second, "every task to run", func() bool {
		return rdb.HLen(context.Background(), prefix+":runs").Val() >= n
	})
	stopAll(t, replicas)
	checkRunOnce(t, rdb, producer, prefix, n)
}

func TestReplicaKilledMidRunHasItsTaskRunByAnotherAfterTheLease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix = "{kill}"
	rdb := client(t, srv)
	replicas := map[string]*replica{}
	for range 2 {
		r := startReplica(t, srv, prefix, shortLease)
		replicas[r.pid()] = r
	}
	producer := producerNode(t, srv, prefix)
	id, err := producer.Schedule(context.Background(), kindHold, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a replica to start the task", func() bool {
		return rdb.LLen(context.Background(), prefix+":started").Val() == 1
	})
	holder := rdb.LIndex(context.Background(), prefix+":started", 0).Val()
	replicas[holder].kill()

	waitFor(t, 30*time.Second, "the task to run again after the lease", func() bool {
		return rdb.HGet(context.Background(), prefix+":runs", id).Val() == "1"
	})
	if by := rdb.HGet(context.Background(), prefix+":ranby", id).Val(); by == holder || replicas[by] == nil {
		t.Fatalf("task rerun by %q, want the surviving replica (killed %s)", by, holder)
	}
	for pid, r := range replicas {
		if pid != holder {
			r.stop(t)
		}
	}
	if c := counts(t, producer); c != (cluster.Counts{}) {
		t.Fatalf("store not empty: %+v", c)
	}
}

func TestRestartOfEveryReplicaLosesNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix, n = "{restart}", 3000
	rdb := client(t, srv)
	producer := producerNode(t, srv, prefix)
	ran := func() int64 { return rdb.HLen(context.Background(), prefix+":runs").Val() }

	replicas := startReplicas(t, srv, prefix, longLease, 3)
	// Spread far enough that the stop comes well before the last task is
	// due even on a busy machine (at 5 s, a slow graceful stop once let
	// every task run first).
	scheduleCounts(t, producer, n, time.Now().Add(300*time.Millisecond), 15*time.Second)
	waitFor(t, 60*time.Second, "a fifth of the tasks to run", func() bool { return ran() >= n/5 })
	stopAll(t, replicas) // graceful: claimed tasks go back at once
	t.Logf("%d of %d tasks ran before every replica stopped", ran(), n)
	if ran() == n {
		t.Fatal("every task ran before the restart; the test proves nothing")
	}

	replicas = startReplicas(t, srv, prefix, longLease, 3)
	waitFor(t, 60*time.Second, "every task to run after the restart", func() bool { return ran() >= n })
	stopAll(t, replicas)
	checkRunOnce(t, rdb, producer, prefix, n)
}

func TestCrashOfEveryReplicaLosesNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix, n = "{crash}", 2000
	rdb := client(t, srv)
	producer := producerNode(t, srv, prefix)
	ran := func() int64 { return rdb.HLen(context.Background(), prefix+":runs").Val() }

	replicas := startReplicas(t, srv, prefix, shortLease, 3)
	scheduleCounts(t, producer, n, time.Now().Add(300*time.Millisecond), 3*time.Second)
	waitFor(t, 60*time.Second, "a third of the tasks to run", func() bool { return ran() >= n/3 })
	for _, r := range replicas {
		r.kill()
	}
	t.Logf("%d of %d tasks ran before every replica was killed", ran(), n)

	replicas = startReplicas(t, srv, prefix, shortLease, 3)
	waitFor(t, 60*time.Second, "every task to run after the crash", func() bool { return ran() >= n })
	waitFor(t, 10*time.Second, "the store to empty", func() bool { return counts(t, producer) == cluster.Counts{} })
	stopAll(t, replicas)
	// At least once: a task killed between its run and its completion
	// runs again; none is lost.
	runs := rdb.HGetAll(context.Background(), prefix+":runs").Val()
	twice := 0
	for i := range n {
		c, _ := strconv.Atoi(runs["task-"+strconv.Itoa(i)])
		if c < 1 {
			t.Errorf("task-%d never ran", i)
		}
		if c > 1 {
			twice++
		}
	}
	t.Logf("%d tasks ran twice (killed between run and completion)", twice)
}

func TestPeriodicRunsOncePerDueTimeAcrossThreeReplicaProcessesWithSkewedClocks(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix, period = "{skew}", 100 * time.Millisecond
	rdb := client(t, srv)
	var replicas []*replica
	for _, skew := range []time.Duration{-40 * time.Millisecond, 0, 45 * time.Millisecond} {
		replicas = append(replicas, startReplica(t, srv, prefix, longLease,
			"CLUSTER_TEST_SKEW="+skew.String(), "CLUSTER_TEST_PERIOD="+period.String()))
	}
	from := firstChecked(time.Now(), period)
	key := func(k int) string { return from.Add(time.Duration(k) * period).UTC().Format(time.RFC3339Nano) }
	waitFor(t, 60*time.Second, "20 consecutive occurrences to run", func() bool {
		for k := range 20 {
			if !rdb.HExists(context.Background(), prefix+":occ", key(k)).Val() {
				return false
			}
		}
		return true
	})
	stopAll(t, replicas)

	occ := rdb.HGetAll(context.Background(), prefix+":occ").Val()
	for k, c := range occ {
		if c != "1" {
			t.Errorf("occurrence %s ran %s times, want 1", k, c)
		}
	}
	for k := range 20 {
		if occ[key(k)] == "" {
			t.Errorf("occurrence %s missing", key(k))
		}
	}
	t.Logf("%d occurrences, each run once", len(occ))
}

func TestPeriodicLongRunsNeverOverlapAcrossThreeReplicaProcesses(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix, period = "{slow}", 100 * time.Millisecond
	rdb := client(t, srv)
	var replicas []*replica
	for range 3 {
		replicas = append(replicas, startReplica(t, srv, prefix, longLease, "CLUSTER_TEST_SLOW="+period.String()))
	}
	waitFor(t, 60*time.Second, "eight runs", func() bool {
		n, _ := rdb.Get(context.Background(), prefix+":slowruns").Int()
		return n >= 8
	})
	stopAll(t, replicas)
	most, err := rdb.Get(context.Background(), prefix+":most").Int()
	if err != nil {
		t.Fatal(err)
	}
	if most != 1 {
		t.Errorf("%d runs of the periodic task went on at once across the replicas, want 1", most)
	}
}

// mostScript counts a run going on (KEYS[1]) and keeps the most ever
// counted at once (KEYS[2]).
var mostScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], n) end
return n
`)

// everyTick is a trigger firing at every multiple of d.
func everyTick(d time.Duration) scheduler.Trigger {
	return scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Truncate(d).Add(d) })
}
