package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// The node on a real Redis Cluster of three masters with one replica each,
// through redis.NewClusterClient: the tasks of each subtest's prefix are
// spread over its partitions, so over every master, and its cluster-wide
// records are on the master of the prefix's own slot.

// clusterClient returns a cluster client of c closed when t ends.
func clusterClient(t *testing.T, c *redistest.Cluster) *redis.ClusterClient {
	t.Helper()
	cl := c.Client()
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// newClusterNode returns a node on c under prefix with the test options
// and opts, its own cluster client, and handlers registered by kind; it is
// stopped when t ends.
func newClusterNode(t *testing.T, c *redistest.Cluster, prefix string, handlers map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
	t.Helper()
	all := append(testOptions(), cluster.WithPrefix(prefix))
	n, err := cluster.New(clusterClient(t, c), append(all, opts...)...)
	require.NoError(t, err)
	for kind, h := range handlers {
		require.NoError(t, n.Handle(kind, h))
	}
	t.Cleanup(n.StopNow)
	return n
}

func TestNodeOnRedisClusterRunsEveryFeature(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	ctx := context.Background()
	prefix := func(t *testing.T) string { return "{" + t.Name() + "}" }

	t.Run("three nodes run each task once", func(t *testing.T) {
		p := prefix(t)
		var mu sync.Mutex // guards runs
		runs := map[string]int{}
		done := make(chan struct{}, 300)
		h := func(_ context.Context, task cluster.Task) error {
			mu.Lock()
			runs[task.ID]++
			mu.Unlock()
			done <- struct{}{}
			return nil
		}
		var nodes []*cluster.Node
		for range 3 {
			n := newClusterNode(t, c, p, map[string]cluster.Handler{"k": h})
			start(t, n)
			nodes = append(nodes, n)
		}
		due := time.Now().Add(300 * time.Millisecond)
		var ids []string
		for i := range 300 {
			id, err := nodes[i%3].Schedule(ctx, "k", []byte("p"), due.Add(time.Duration(i)*time.Millisecond))
			require.NoError(t, err)
			ids = append(ids, id)
		}
		for range ids {
			recv(t, done, 20*time.Second, "a run")
		}
		waitFor(t, 10*time.Second, "every task to complete", func() bool { return counts(t, nodes[0]) == cluster.Counts{} })
		for _, n := range nodes {
			require.NoError(t, n.Stop(ctx))
		}
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			assert.Equal(t, 1, runs[id], "runs of %s", id)
		}
	})

	t.Run("retry, dead, Retry, Delete", func(t *testing.T) {
		p := prefix(t)
		attempts := make(chan int, 8)
		healed := make(chan struct{})
		n := newClusterNode(t, c, p, map[string]cluster.Handler{
			"flaky": func(_ context.Context, task cluster.Task) error {
				attempts <- task.Attempt
				select {
				case <-healed:
					return nil
				default:
					return errors.New("not yet")
				}
			},
		})
		start(t, n)
		id, err := n.Schedule(ctx, "flaky", nil, time.Now(), cluster.WithTaskMaxRetries(1))
		require.NoError(t, err)
		assert.Equal(t, 0, recv(t, attempts, 10*time.Second, "the first run"))
		assert.Equal(t, 1, recv(t, attempts, 10*time.Second, "the retry"))
		waitFor(t, 10*time.Second, "the task to die", func() bool { return counts(t, n).Dead == 1 })
		info, ok, err := n.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, cluster.Dead, info.State)
		assert.Equal(t, "not yet", info.LastError)

		close(healed)
		require.NoError(t, n.Retry(ctx, id))
		assert.Equal(t, 0, recv(t, attempts, 10*time.Second, "the run after Retry"))
		waitFor(t, 10*time.Second, "the task to complete", func() bool { return counts(t, n) == cluster.Counts{} })

		// A dead task deleted, and one purged, on a node whose handler
		// gives up at once.
		require.NoError(t, n.Stop(ctx))
		m := newClusterNode(t, c, p, map[string]cluster.Handler{
			"flaky": func(context.Context, cluster.Task) error { return cluster.ErrSkipRetry },
		})
		var dead []string
		for range 2 {
			id, err := m.Schedule(ctx, "flaky", nil, time.Now())
			require.NoError(t, err)
			dead = append(dead, id)
		}
		start(t, m)
		waitFor(t, 10*time.Second, "both to die", func() bool { return counts(t, m).Dead == 2 })
		require.NoError(t, m.Delete(ctx, dead[0]))
		k, err := m.Purge(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, 1, k)
		assert.Equal(t, cluster.Counts{}, counts(t, m))
	})

	t.Run("cancel, run now and reschedule", func(t *testing.T) {
		p := prefix(t)
		ran := make(chan string, 4)
		n := newClusterNode(t, c, p, map[string]cluster.Handler{
			"k": func(_ context.Context, task cluster.Task) error { ran <- string(task.Payload); return nil },
		})
		start(t, n)
		later := time.Now().Add(time.Hour)
		canceled, err := n.Schedule(ctx, "k", []byte("canceled"), later)
		require.NoError(t, err)
		now, err := n.Schedule(ctx, "k", []byte("run now"), later)
		require.NoError(t, err)
		moved, err := n.Schedule(ctx, "k", []byte("moved"), later)
		require.NoError(t, err)
		res, err := n.Cancel(ctx, canceled)
		require.NoError(t, err)
		assert.Equal(t, cluster.Cancellation{Removed: true}, res)
		require.NoError(t, n.RunNow(ctx, now))
		assert.Equal(t, "run now", recv(t, ran, 10*time.Second, "the run now"))
		require.NoError(t, n.Reschedule(ctx, moved, time.Now().Add(100*time.Millisecond)))
		assert.Equal(t, "moved", recv(t, ran, 10*time.Second, "the rescheduled run"))
		waitFor(t, 10*time.Second, "the store to empty", func() bool { return counts(t, n) == cluster.Counts{} })
		select {
		case got := <-ran:
			t.Fatalf("%s ran", got)
		default:
		}
	})

	t.Run("periodic runs once per due time on two nodes", func(t *testing.T) {
		p := prefix(t)
		const period = 100 * time.Millisecond
		var mu sync.Mutex // guards runs
		runs := map[time.Time]int{}
		var nodes []*cluster.Node
		for range 2 {
			n := newClusterNode(t, c, p, nil, cluster.WithLease(20*time.Second))
			// Each occurrence runs (MisfireRunEach): on a busy
			// machine a claim a period late would coalesce.
			require.NoError(t, n.Periodic("report", everyTick(period), func(_ context.Context, task cluster.Task) error {
				mu.Lock()
				runs[task.Due]++
				mu.Unlock()
				return nil
			}, cluster.WithMisfire(cluster.MisfireRunEach)))
			nodes = append(nodes, n)
		}
		for _, n := range nodes {
			start(t, n)
		}
		from := firstChecked(time.Now(), period)
		waitFor(t, 30*time.Second, "10 consecutive occurrences to run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for k := range 10 {
				if runs[from.Add(time.Duration(k)*period)] == 0 {
					return false
				}
			}
			return true
		})
		for _, n := range nodes {
			require.NoError(t, n.Stop(ctx))
		}
		mu.Lock()
		defer mu.Unlock()
		for due, k := range runs {
			assert.Equal(t, 1, k, "runs of the occurrence due %v", due)
		}
	})

	t.Run("List pages through every state", func(t *testing.T) {
		p := prefix(t)
		n := newClusterNode(t, c, p, nil)
		base := time.Now().Add(time.Hour).Truncate(time.Second)
		want := map[string]bool{}
		for i := range 25 {
			id, err := n.Schedule(ctx, "k", nil, base.Add(time.Duration(i%4)*time.Second), cluster.WithID(fmt.Sprintf("t%02d", i)))
			require.NoError(t, err)
			want[id] = true
		}
		seen := map[string]bool{}
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "the listing does not end")
			page, err := n.List(ctx, cluster.ListQuery{State: cluster.Pending, Kind: "k", Cursor: cursor, Limit: 10})
			require.NoError(t, err)
			for _, info := range page.Tasks {
				assert.False(t, seen[info.ID], "%s listed twice", info.ID)
				seen[info.ID] = true
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		assert.Equal(t, want, seen)
		for _, state := range []cluster.State{cluster.Running, cluster.Dead} {
			page, err := n.List(ctx, cluster.ListQuery{State: state, Limit: 10})
			require.NoError(t, err)
			assert.Empty(t, page.Tasks, "%s tasks", state)
		}
	})
}

func TestReplicaAcksRefuseAScheduleNoReplicaHolds(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	ctx := context.Background()
	const p = "{acks}"
	// A generous time limit where the replica is up (a loaded machine
	// may be slow to acknowledge), a short one where it is gone.
	// The tasks' IDs are chosen in the partitions of the prefix's master.
	master, err := c.MasterFor(ctx, p)
	require.NoError(t, err)
	var ids []string
	for i := 0; len(ids) < 2; i++ {
		id := fmt.Sprintf("acked-%d", i)
		m, err := c.MasterFor(ctx, cluster.PartitionKey(p, id, "pending"))
		require.NoError(t, err)
		if m == master {
			ids = append(ids, id)
		}
	}
	n := newClusterNode(t, c, p, nil, cluster.WithReplicaAcks(1, 10*time.Second))
	id, err := n.Schedule(ctx, "k", nil, time.Now().Add(time.Hour), cluster.WithID(ids[0]))
	require.NoError(t, err, "a replica is up: the schedule is acknowledged")
	short := newClusterNode(t, c, p, nil, cluster.WithReplicaAcks(1, 300*time.Millisecond))

	// Without the master's replica, WAIT finds nobody to acknowledge.
	for _, s := range c.Servers {
		if s == master {
			continue
		}
		sc := s.Client()
		role, err := sc.Do(ctx, "ROLE").Slice()
		_ = sc.Close()
		require.NoError(t, err)
		if role[0] == "slave" && fmt.Sprint(role[2]) == portOf(master.Addr) {
			s.Kill()
		}
	}
	_, err = short.Schedule(ctx, "k", nil, time.Now().Add(time.Hour), cluster.WithID(ids[1]))
	require.ErrorIs(t, err, cluster.ErrNotReplicated)
	_, err = short.Cancel(ctx, id)
	require.ErrorIs(t, err, cluster.ErrNotReplicated)
}

// portOf returns the port of a host:port address.
func portOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[i+1:]
		}
	}
	return addr
}

func TestReplicaAcksBadArguments(t *testing.T) {
	// New contacts no server: these clients never connect.
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cl.Close()
	for _, opt := range []cluster.Option{cluster.WithReplicaAcks(-1, time.Second), cluster.WithReplicaAcks(1, 0)} {
		_, err := cluster.New(cl, opt)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	_, err := cluster.New(ring, cluster.WithReplicaAcks(1, time.Second))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument, "WAIT needs one connection to the master")
	n, err := cluster.New(cl, cluster.WithReplicaAcks(0, 0))
	require.NoError(t, err, "0 replicas waits for nothing")
	n.StopNow()
}

func TestNewWarnsOfAClusterClientPoolBelowTheConcurrency(t *testing.T) {
	for _, tc := range []struct {
		pool int
		warn bool
	}{{5, true}, {32, false}} {
		// New contacts no server: the client never connects.
		cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, PoolSize: tc.pool})
		var logged bytes.Buffer
		n, err := cluster.New(cl, cluster.WithConcurrency(16), cluster.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
		require.NoError(t, err)
		n.StopNow()
		_ = cl.Close()
		assert.Equal(t, tc.warn, strings.Contains(logged.String(), "pool is smaller than the concurrency"),
			"pool %d per server, concurrency 16: %s", tc.pool, logged.String())
	}
}
