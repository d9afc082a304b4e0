package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// result is what one run of the command gave.
type result struct {
	stdout, stderr string
	code           int
}

// exec runs the built stpectl with args and exactly the environment env
// (so that no REDIS_URL of the machine leaks in).
func runCtl(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(stpectlBin, args...)
	cmd.Env = append([]string{}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run stpectl %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// fixture is a Redis of the test's own (a redis-server, or a Redis
// Cluster, or a master behind Sentinel) and a producer-only node on it,
// under a prefix of the test's own; or a PostgreSQL database of the
// test's own (newPostgresFixture), with no prefix.
type fixture struct {
	t   *testing.T
	srv *redistest.Server // the one server, nil on a Redis Cluster or PostgreSQL
	// redisArgs are the global flags that point stpectl at the Redis.
	redisArgs []string
	// newClient returns a new client of the Redis; the caller closes it.
	newClient func() redis.UniversalClient
	rdb       redis.UniversalClient
	prefix    string
	// pgURL is the PostgreSQL database's URL, "" on Redis.
	pgURL string
	// newNode makes a node on a connection of its own to the store (on
	// Redis, under the prefix) with opts, closed when the test ends.
	newNode func(opts ...cluster.Option) *cluster.Node
	node    *cluster.Node
}

// newFixture is a fixture on a redis-server of the test's own.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	return newFixtureOn(t, srv, []string{"-redis", srv.Addr}, func() redis.UniversalClient { return srv.Client() })
}

// newClusterFixture is a fixture on the Redis Cluster c, under prefix
// (tests share a cluster, each with a prefix of its own).
func newClusterFixture(t *testing.T, c *redistest.Cluster, prefix string) *fixture {
	t.Helper()
	f := newFixtureOn(t, nil, []string{"-redis", strings.Join(c.Addrs()[:2], ",")},
		func() redis.UniversalClient { return c.Client() })
	f.setPrefix(prefix)
	return f
}

// newFixtureOn is a fixture on the Redis that redisArgs name and
// newClient reaches.
func newFixtureOn(t *testing.T, srv *redistest.Server, redisArgs []string, newClient func() redis.UniversalClient) *fixture {
	t.Helper()
	rdb := newClient()
	t.Cleanup(func() { _ = rdb.Close() })
	f := &fixture{t: t, srv: srv, redisArgs: redisArgs, newClient: newClient, rdb: rdb}
	f.newNode = func(opts ...cluster.Option) *cluster.Node {
		t.Helper()
		rdb := newClient()
		t.Cleanup(func() { _ = rdb.Close() })
		n, err := cluster.New(rdb, append([]cluster.Option{cluster.WithPrefix(f.prefix)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.setPrefix("{ctl}")
	return f
}

// setPrefix makes the fixture's producer node work under prefix.
func (f *fixture) setPrefix(prefix string) {
	f.t.Helper()
	n, err := cluster.New(f.rdb, cluster.WithPrefix(prefix))
	if err != nil {
		f.t.Fatal(err)
	}
	f.prefix, f.node = prefix, n
}

// storeArgs are the global flags that point stpectl at the fixture's
// store: the Redis and the prefix, or the PostgreSQL database.
func (f *fixture) storeArgs() []string {
	if f.pgURL != "" {
		return []string{"-postgres", f.pgURL}
	}
	return append(append([]string{}, f.redisArgs...), "-prefix", f.prefix)
}

// ctl runs stpectl on the fixture's store, given as flags.
func (f *fixture) ctl(args ...string) result {
	f.t.Helper()
	return runCtl(f.t, nil, append(f.storeArgs(), args...)...)
}

// ctlJSON runs stpectl with -json, expects exit status code, and decodes
// its stdout into v.
func (f *fixture) ctlJSON(code int, v any, args ...string) result {
	f.t.Helper()
	r := f.ctl(append([]string{"-json"}, args...)...)
	if r.code != code {
		f.t.Fatalf("stpectl %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.code, code, r.stdout, r.stderr)
	}
	decodeOne(f.t, r.stdout, v)
	return r
}

// decodeOne decodes exactly one JSON document from s into v, refusing
// unknown fields (the documented shapes are the whole of it).
func decodeOne(t *testing.T, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document in %q", s)
	}
}

// wantOK fails t unless r exited 0.
func wantOK(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// wantExit fails t unless r exited with code and its stderr holds each of
// wants.
func wantExit(t *testing.T, r result, code int, wants ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// schedule stores a task through the producer node.
func (f *fixture) schedule(kind, id string, payload []byte, due time.Time) {
	f.t.Helper()
	if _, err := f.node.Schedule(context.Background(), kind, payload, due, cluster.WithID(id)); err != nil {
		f.t.Fatal(err)
	}
}

// get reads a task through the producer node.
func (f *fixture) get(id string) (cluster.Info, bool) {
	f.t.Helper()
	info, ok, err := f.node.Get(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return info, ok
}

// worker starts a node on the fixture's prefix that handles kind with h,
// with short test times, no logging and opts; it is stopped when the test
// ends.
func (f *fixture) worker(kind string, h cluster.Handler, opts ...cluster.Option) *cluster.Node {
	f.t.Helper()
	n := f.newNode(append([]cluster.Option{cluster.WithLease(2 * time.Second), cluster.WithWindow(5 * time.Second),
		cluster.WithSweepInterval(time.Second), cluster.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err := n.Handle(kind, h); err != nil {
		f.t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(n.StopNow)
	return n
}

// deadTasks makes a dead task of each id: a worker whose handler fails
// runs each once (no retries), and is stopped once all are dead.
func (f *fixture) deadTasks(kind string, ids ...string) {
	f.t.Helper()
	w := f.worker(kind, func(context.Context, cluster.Task) error { return errors.New("boom: the mail server said no") })
	for _, id := range ids {
		if _, err := f.node.Schedule(context.Background(), kind, []byte("payload of "+id), time.Now(),
			cluster.WithID(id), cluster.WithTaskMaxRetries(0)); err != nil {
			f.t.Fatal(err)
		}
	}
	for _, id := range ids {
		f.waitState(id, cluster.Dead)
	}
	w.StopNow()
}

// waitState polls the task until it is in state: the state lives in the
// store, where no channel can signal it.
func (f *fixture) waitState(id string, state cluster.State) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, ok := f.get(id)
		if ok && info.State == state {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("task %s not %s after 20s (found %v, %+v)", id, state, ok, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// blockingHandler sends each task's ID on started, then waits until
// release is closed or its ctx ends; it returns ctx's cause then.
func blockingHandler(started chan<- string, release <-chan struct{}) cluster.Handler {
	return func(ctx context.Context, task cluster.Task) error {
		started <- task.ID
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// recv waits for a value on ch, failing t after 20 s.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
