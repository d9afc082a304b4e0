package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A node made by NewWithDriver runs on the driver it is given exactly as
// one made by New: here the Redis driver, so that the path is proved
// without another store.

// newDriverNode returns a node on a Redis driver of srv's prefix with
// parts partitions, the test options and opts; it is stopped when t ends.
func newDriverNode(t *testing.T, srv *redistest.Server, parts int, opts ...cluster.Option) *cluster.Node {
	t.Helper()
	drv := redisdriver.New(client(t, srv), redisdriver.Options{Prefix: cluster.DefaultPrefix, Partitions: parts})
	n, err := cluster.NewWithDriver(drv, append(testOptions(), opts...)...)
	require.NoError(t, err)
	t.Cleanup(n.StopNow)
	return n
}

func TestNewWithDriverRunsRetriesAndCompletesTasks(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	var redisCalls atomic.Int64
	n := newDriverNode(t, srv, 8, cluster.WithObserver(cluster.Observer{
		RedisCall: func(cluster.RedisCall) { redisCalls.Add(1) },
	}))
	attempts := make(chan cluster.Task, 4)
	require.NoError(t, n.Handle("flaky", func(_ context.Context, task cluster.Task) error {
		attempts <- task
		if task.Attempt == 0 {
			return errors.New("try again")
		}
		return nil
	}))
	start(t, n)

	id, err := n.Schedule(context.Background(), "flaky", []byte("p"), time.Now())
	require.NoError(t, err)
	first := recv(t, attempts, 10*time.Second, "the first run")
	assert.Equal(t, id, first.ID)
	assert.Equal(t, []byte("p"), first.Payload)
	assert.Equal(t, 1, recv(t, attempts, 10*time.Second, "the retry").Attempt)
	waitFor(t, 5*time.Second, "the completed task to leave the store", func() bool {
		return counts(t, n) == cluster.Counts{}
	})
	assert.Zero(t, redisCalls.Load(), "Observer.RedisCall is New's only")

	// The store is the one New reads with the driver's number of
	// partitions: a node made by New sees what this one stores.
	later, err := n.Schedule(context.Background(), "flaky", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	byNew := newNode(t, srv, nil, cluster.WithPartitions(8))
	info, ok, err := byNew.Get(context.Background(), later)
	require.NoError(t, err)
	require.True(t, ok, "a node made by New finds the task")
	assert.Equal(t, cluster.Pending, info.State)
}

func TestNewWithDriverRefusesBadArguments(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	drv := redisdriver.New(client(t, srv), redisdriver.Options{Prefix: cluster.DefaultPrefix, Partitions: 8})
	for _, c := range []struct {
		name string
		d    driver.Driver
		opts []cluster.Option
		want string
	}{
		{"nil driver", nil, nil, "cluster: NewWithDriver: nil driver"},
		{"nil option", drv, []cluster.Option{nil}, "nil option"},
		{"prefix", drv, []cluster.Option{cluster.WithPrefix("{other}")}, "WithPrefix is a setting of the Redis driver"},
		{"replica acks", drv, []cluster.Option{cluster.WithReplicaAcks(1, time.Second)}, "WithReplicaAcks is a setting of the Redis driver"},
		{"other partitions", drv, []cluster.Option{cluster.WithPartitions(16)}, "WithPartitions(16) differs from the driver's 8 partitions"},
		{"bad node option", drv, []cluster.Option{cluster.WithConcurrency(0)}, "concurrency 0 < 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := cluster.NewWithDriver(c.d, c.opts...)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			assert.Contains(t, err.Error(), c.want)
			assert.Nil(t, n)
		})
	}
	n, err := cluster.NewWithDriver(drv, cluster.WithPartitions(8))
	require.NoError(t, err, "WithPartitions repeating the driver's number is allowed")
	n.StopNow()
}

func TestNewWithDriverStartRefusesAnotherNumberOfPartitions(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	start(t, newDriverNode(t, srv, 8))
	other := newDriverNode(t, srv, 4)
	err := other.Start(context.Background())
	require.ErrorIs(t, err, cluster.ErrLayout)
	assert.Contains(t, err.Error(), "is recorded with 8 partitions")
	assert.Contains(t, err.Error(), "its driver has 4")
	assert.Contains(t, err.Error(), srv.Addr, "names the store by the driver's address")
}

// TestNewWithDriverNamesTheStoreAsItsDriverDoes: a node made by
// NewWithDriver says nothing of Redis of its own: its errors name the
// store by the driver's Addr, and Health says the store did not answer.
func TestNewWithDriverNamesTheStoreAsItsDriverDoes(t *testing.T) {
	addr := silentServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 50 * time.Millisecond,
		WriteTimeout: 50 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	silent, err := cluster.NewWithDriver(redisdriver.New(rdb, redisdriver.Options{Prefix: cluster.DefaultPrefix, Partitions: 8}),
		testOptions()...)
	require.NoError(t, err)
	_, _, err = silent.Get(context.Background(), "t1")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "cluster: get t1: "+addr+": "), "got %q", err)
	assert.NotContains(t, err.Error(), "redis "+addr)

	srv := redistest.Start(t, redistest.Options{})
	n := newDriverNode(t, srv, 8)
	start(t, n)
	srv.Kill()
	got, err := n.Health(context.Background(), 200*time.Millisecond)
	require.NoError(t, err)
	assert.False(t, got.OK)
	assert.Contains(t, got.Reason, "the store did not answer")
}
