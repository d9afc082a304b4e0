package cluster_test

import (
	"context"
	"net"
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

// silentServer accepts connections and never answers: every call times
// out. It is closed when t ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards conns
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// TestErrorsNameTheTaskTheCauseOnceAndTheServerOnce: a call that times out
// names the server's address once, the action and its task once, and the
// package's prefix once; a refused action reads "cluster: retry X: no such
// task".
func TestErrorsNameTheTaskTheCauseOnceAndTheServerOnce(t *testing.T) {
	addr := silentServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 50 * time.Millisecond,
		WriteTimeout: 50 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	n, err := cluster.New(rdb, testOptions()...)
	require.NoError(t, err)
	require.NoError(t, n.Handle("k", func(context.Context, cluster.Task) error { return nil }))
	ctx := context.Background()
	errOf := func(_ any, err error) error { return err }
	errOf3 := func(_ any, _ bool, err error) error { return err }
	for name, c := range map[string]struct {
		err  error
		says string
	}{
		"get":       {errOf3(n.Get(ctx, "t1")), "cluster: get t1: redis " + addr + ": "},
		"retry":     {n.Retry(ctx, "t1"), "cluster: retry t1: redis " + addr + ": "},
		"delete":    {n.Delete(ctx, "t1"), "cluster: delete t1: redis " + addr + ": "},
		"run now":   {n.RunNow(ctx, "t1"), "cluster: run now t1: redis " + addr + ": "},
		"cancel":    {errOf(n.Cancel(ctx, "t1")), "cluster: cancel t1: redis " + addr + ": "},
		"pause":     {n.Pause(ctx, "k"), "cluster: pause k: redis " + addr + ": "},
		"retry all": {errOf(n.RetryAll(ctx, cluster.Selection{State: cluster.Dead})), "cluster: retry all dead tasks"},
		"list":      {errOf(n.List(ctx, cluster.ListQuery{State: cluster.Dead, Limit: 5})), "cluster: list dead: redis " + addr + ": "},
		"counts":    {errOf(n.Counts(ctx)), "cluster: counts: redis " + addr + ": "},
	} {
		require.Error(t, c.err, name)
		msg := c.err.Error()
		assert.True(t, strings.HasPrefix(msg, c.says), "%s: %q, want it to start %q", name, msg, c.says)
		assert.Equal(t, 1, strings.Count(msg, addr), "%s names the server once: %q", name, msg)
		assert.Equal(t, 1, strings.Count(msg, "cluster: "), "%s says cluster once: %q", name, msg)
	}

	srv := redistest.Start(t, redistest.Options{})
	ok := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error { return nil }},
		cluster.WithReplicaAcks(1, 10*time.Millisecond))
	id, err := ok.Schedule(ctx, "k", nil, time.Now().Add(time.Hour), cluster.WithID("p1"))
	require.Error(t, err, "no replica acknowledges")
	assert.ErrorIs(t, err, cluster.ErrNotReplicated)
	_ = id
	assert.EqualError(t, ok.Retry(ctx, "nope"), "cluster: retry nope: no such task")
	assert.EqualError(t, ok.Retry(ctx, "p1"), "cluster: retry p1: the task is pending")
	_, err = ok.Cancel(ctx, "p1")
	assert.ErrorIs(t, err, cluster.ErrNotReplicated)
	assert.Equal(t, 1, strings.Count(err.Error(), "cluster: "), "one prefix: %q", err)
	assert.Contains(t, err.Error(), "cluster: cancel p1: ")
}

// TestBadKindErrorsNameTheAction: a bad kind is refused naming the action
// once and the kind once.
func TestBadKindErrorsNameTheAction(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	n := newNode(t, srv, nil)
	ctx := context.Background()
	_, err := n.List(ctx, cluster.ListQuery{State: cluster.Pending, Kind: "a b", Limit: 1})
	assert.EqualError(t, err, `cluster: list pending: kind "a b": want 1 to 200 bytes without white space`)
	assert.EqualError(t, n.Pause(ctx, "a b"), `cluster: pause: kind "a b": want 1 to 200 bytes without white space`)
	_, err = n.RetryAll(ctx, cluster.Selection{State: cluster.Dead, Kind: "a b"})
	assert.EqualError(t, err, `cluster: retry all dead tasks of kind a b: kind "a b": want 1 to 200 bytes without white space`)
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument)
}
