package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Partitions and ownership on real servers: the keys of one prefix spread
// over the masters of a Redis Cluster, and the nodes of a prefix share its
// partitions, each running its share once.

func TestPartitionsSpreadTheTasksOverTheMastersOfARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	ctx := context.Background()
	n := newClusterNode(t, c, "{spread}", nil)
	const tasks = 3000
	due := time.Now().Add(time.Hour)
	for i := range tasks {
		_, err := n.Schedule(ctx, "email", nil, due, cluster.WithID(fmt.Sprintf("spread-%d", i)))
		require.NoError(t, err)
	}
	cl := clusterClient(t, c)
	var mu sync.Mutex
	var sizes []int64
	require.NoError(t, cl.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		k, err := m.DBSize(ctx).Result()
		mu.Lock()
		sizes = append(sizes, k)
		mu.Unlock()
		return err
	}))
	require.Len(t, sizes, 3)
	total := sizes[0] + sizes[1] + sizes[2]
	require.GreaterOrEqual(t, total, int64(tasks), "every task's hash is stored")
	for _, k := range sizes {
		share := float64(k) / (float64(total) / 3)
		assert.InDelta(t, 1, share, 0.10, "keys per master %v: each within 10%% of the mean", sizes)
	}
}

// ledger records runs by task ID, and by node.
type ledger struct {
	mu     sync.Mutex
	runs   map[string]int
	byNode map[string]int
	all    chan struct{}
	want   int
}

func newLedger(want int) *ledger {
	return &ledger{runs: make(map[string]int), byNode: make(map[string]int), all: make(chan struct{}), want: want}
}

func (l *ledger) handler(node string) cluster.Handler {
	return func(_ context.Context, task cluster.Task) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.runs[task.ID]++
		l.byNode[node]++
		if len(l.runs) == l.want && l.byNode[node] > 0 {
			select {
			case <-l.all:
			default:
				close(l.all)
			}
		}
		return nil
	}
}

func TestNodesShareThePartitionsAndRunEachTaskOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	const tasks = 600
	l := newLedger(tasks)
	var nodes []*cluster.Node
	for i := range 3 {
		n := newNode(t, srv, map[string]cluster.Handler{"work": l.handler(fmt.Sprint(i))})
		start(t, n)
		nodes = append(nodes, n)
	}
	waitFor(t, 10*time.Second, "the three nodes to share the partitions", func() bool {
		owned := 0
		for _, n := range nodes {
			s := n.Stats()
			if s.Owned > 22 || s.BackedUp == 0 {
				return false
			}
			owned += s.Owned
		}
		return owned == cluster.DefaultPartitions
	})
	due := time.Now().Add(3 * time.Second)
	for i := range tasks {
		_, err := nodes[i%3].Schedule(ctx, "work", nil, due.Add(time.Duration(i)*time.Millisecond))
		require.NoError(t, err)
	}
	waitFor(t, 10*time.Second, "every task in some window", func() bool {
		sum := 0
		for _, n := range nodes {
			sum += n.Stats().Windowed
		}
		return sum >= tasks
	})
	for i, n := range nodes {
		assert.LessOrEqual(t, n.Stats().Windowed, 2*tasks/3, "node %d holds at most 2/N of the near-due tasks", i)
		assert.Less(t, n.Stats().Windowed, tasks/2, "node %d holds about its share of the near-due tasks", i)
	}
	recv(t, l.all, 30*time.Second, "every task's run")
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, k := range l.runs {
		assert.Equal(t, 1, k, "task %s ran once", id)
	}
	for node, k := range l.byNode {
		assert.Greater(t, k, tasks/6, "node %s ran its share", node)
	}
}

// A node that stops announces it; the other takes its share at once (a
// node that dies is taken over when its membership lapses: the chaos test
// kills nodes).
func TestALeavingNodesPartitionsAreTakenOverAtOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	const tasks = 200
	l := newLedger(tasks)
	a := newNode(t, srv, map[string]cluster.Handler{"work": l.handler("a")})
	b := newNode(t, srv, map[string]cluster.Handler{"work": l.handler("b")})
	start(t, a)
	start(t, b)
	waitFor(t, 10*time.Second, "the two nodes to share the partitions", func() bool {
		return a.Stats().Owned == cluster.DefaultPartitions/2 && b.Stats().Owned == cluster.DefaultPartitions/2
	})
	b.StopNow()
	waitFor(t, testLease, "a to own every partition", func() bool { return a.Stats().Owned == cluster.DefaultPartitions })
	due := time.Now().Add(100 * time.Millisecond)
	for range tasks {
		_, err := a.Schedule(ctx, "work", nil, due)
		require.NoError(t, err)
	}
	recv(t, l.all, 10*time.Second, "every task's run after b left")
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Equal(t, tasks, l.byNode["a"], "a ran every task, b's share too")
	for id, k := range l.runs {
		assert.Equal(t, 1, k, "task %s ran once", id)
	}
}

// A node that dies stays a member until its membership lapses: meanwhile
// the backups of its partitions claim its overdue tasks, and once it
// lapses the others own its partitions. The death is made by stopping a
// node and writing its membership back, as a node that stopped renewing
// leaves it; a lease of a minute makes sure the tasks ran through the
// backup before the membership lapses, which the test then brings
// forward.
func TestADeadNodesTasksAreClaimedByItsBackupsThenItsPartitionsTakenOver(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := client(t, srv)
	ctx := context.Background()
	const tasks = 100
	l := newLedger(tasks)
	a := newNode(t, srv, map[string]cluster.Handler{"work": l.handler("a")}, cluster.WithLease(time.Minute))
	b := newNode(t, srv, map[string]cluster.Handler{"work": l.handler("b")}, cluster.WithLease(time.Minute))
	start(t, a)
	start(t, b)
	waitFor(t, 10*time.Second, "the two nodes to share the partitions", func() bool {
		return a.Stats().Owned == cluster.DefaultPartitions/2 && b.Stats().Owned == cluster.DefaultPartitions/2
	})
	b.StopNow()
	// b's membership, as b left it at its last renewal: live for a lease.
	now, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	require.NoError(t, rdb.ZAdd(ctx, "{scheduler}:nodes", redis.Z{Score: float64(now.Add(time.Minute).UnixMicro()), Member: b.Name()}).Err())
	require.NoError(t, rdb.HSet(ctx, "{scheduler}:nodekinds", b.Name(), "work").Err())
	require.NoError(t, rdb.Publish(ctx, "{scheduler}:membership", "changed").Err())
	waitFor(t, testLease, "a to see b again", func() bool { return a.Stats().Owned == cluster.DefaultPartitions/2 })

	for range tasks {
		_, err := a.Schedule(ctx, "work", nil, time.Now())
		require.NoError(t, err)
	}
	recv(t, l.all, 20*time.Second, "every task's run, b's share by a as its backup")
	assert.Equal(t, cluster.DefaultPartitions/2, a.Stats().Owned, "b was still a member")

	// b's membership lapses; a finds it gone at its next renewal.
	require.NoError(t, rdb.ZAdd(ctx, "{scheduler}:nodes", redis.Z{Score: 1, Member: b.Name()}).Err())
	waitFor(t, 10*time.Second, "a to own every partition once b's membership lapsed", func() bool {
		require.NoError(t, rdb.Publish(ctx, "{scheduler}:membership", "changed").Err())
		return a.Stats().Owned == cluster.DefaultPartitions
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Equal(t, tasks, l.byNode["a"], "a ran every task")
	for id, k := range l.runs {
		assert.Equal(t, 1, k, "task %s ran once", id)
	}
}
