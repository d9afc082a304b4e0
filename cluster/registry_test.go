package cluster_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// members lists the members through n.
func members(t *testing.T, n *cluster.Node) []cluster.Member {
	t.Helper()
	ms, err := n.Members(context.Background())
	require.NoError(t, err)
	return ms
}

// member returns the member id among ms, if there.
func member(ms []cluster.Member, id string) (cluster.Member, bool) {
	i := slices.IndexFunc(ms, func(m cluster.Member) bool { return m.Name == id })
	if i < 0 {
		return cluster.Member{}, false
	}
	return ms[i], true
}

func TestMembersListsStartedNodesWithTheirRecordAndNotProducers(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	started := make(chan cluster.Task, 1)
	a := newNode(t, srv, map[string]cluster.Handler{"email": blocking(started)}, cluster.WithConcurrency(3))
	require.NoError(t, a.Periodic("report", everyTick(time.Hour), func(context.Context, cluster.Task) error { return nil }))
	b := newNode(t, srv, map[string]cluster.Handler{"sms": func(context.Context, cluster.Task) error { return nil }})
	producer := newNode(t, srv, nil)
	assert.Empty(t, members(t, producer), "no node started yet")

	// The record keeps microseconds; Started is the node's clock and
	// Heartbeat Redis's, both this machine's clock here: each falls
	// between the test's readings around the event, however long a
	// loaded box stalls the test.
	before := time.Now().Truncate(time.Microsecond)
	start(t, a)
	aStarted := time.Now()
	start(t, b)
	ms := members(t, producer)
	listed := time.Now()
	require.Len(t, ms, 2, "the producer never started: no record")
	want := []string{a.Name(), b.Name()}
	slices.Sort(want)
	assert.Equal(t, want, []string{ms[0].Name, ms[1].Name}, "sorted by name")

	ma, _ := member(ms, a.Name())
	host, _ := os.Hostname()
	assert.Equal(t, host, ma.Host)
	assert.Equal(t, os.Getpid(), ma.PID)
	assert.NotEmpty(t, ma.Version)
	assert.Equal(t, 3, ma.Concurrency)
	assert.Equal(t, []string{"@report", "email"}, ma.Kinds)
	assert.False(t, ma.Stopping)
	assert.WithinRange(t, ma.Started, before, aStarted)
	assert.WithinRange(t, ma.Heartbeat, before, listed)
	assert.Equal(t, testLease, ma.Expires.Sub(ma.Heartbeat), "the record lives a lease past each renewal")
	mb, _ := member(ms, b.Name())
	assert.Equal(t, []string{"sms"}, mb.Kinds)

	// The running count follows the node at its next renewal.
	_, err := producer.Schedule(context.Background(), "email", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run on A")
	waitFor(t, 10*time.Second, "A's record to show its run", func() bool {
		m, ok := member(members(t, producer), a.Name())
		return ok && m.Running == 1
	})
}

func TestStoppingNodeShowsStoppingThenLeaves(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	started := make(chan cluster.Task, 1)
	release := make(chan struct{})
	a := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		started <- cluster.Task{}
		<-release
		return nil
	}})
	observer := newNode(t, srv, nil)
	start(t, a)
	_, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")

	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(context.Background()) }()
	waitFor(t, 10*time.Second, "the record to show stopping", func() bool {
		m, ok := member(members(t, observer), a.Name())
		return ok && m.Stopping
	})
	close(release)
	require.NoError(t, recv(t, stopped, 10*time.Second, "Stop"))
	_, ok := member(members(t, observer), a.Name())
	assert.False(t, ok, "a stopped node's record is removed at once")
}

// TestStoppingNodeKeepsItsRecordPastALease checks that a Stop waiting for
// a long run keeps renewing the record, marked stopping.
func TestStoppingNodeKeepsItsRecordPastALease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	started := make(chan cluster.Task, 1)
	release := make(chan struct{})
	a := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		started <- cluster.Task{}
		<-release
		return nil
	}})
	observer := newNode(t, srv, nil)
	start(t, a)
	_, err := a.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(context.Background()) }()
	var first cluster.Member
	waitFor(t, 10*time.Second, "the record to show stopping", func() bool {
		m, ok := member(members(t, observer), a.Name())
		first = m
		return ok && m.Stopping
	})
	waitFor(t, 10*time.Second, "a renewal past the first record's expiry", func() bool {
		m, ok := member(members(t, observer), a.Name())
		require.True(t, ok, "the stopping node's record expired")
		require.True(t, m.Stopping)
		return m.Heartbeat.After(first.Expires)
	})
	close(release)
	require.NoError(t, recv(t, stopped, 10*time.Second, "Stop"))
}

// TestKilledReplicaRecordExpiresAfterALease checks that the record of a node
// killed without a word stays listed until the expiry its last renewal
// set, leaves the listing then, and that its key goes with it. Dead, the
// replica renews nothing more, so that expiry is fixed: the test compares
// Redis's clock with it rather than its own, which a loaded box stalls.
func TestKilledReplicaRecordExpiresAfterALease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix = "{killed}"
	ctx := context.Background()
	rdb := client(t, srv)
	observer, err := cluster.New(rdb, cluster.WithPrefix(prefix))
	require.NoError(t, err)
	r := startReplica(t, srv, prefix, shortLease)
	pid, err := strconv.Atoi(r.pid())
	require.NoError(t, err)
	ms := members(t, observer)
	require.Len(t, ms, 1)
	m := ms[0]
	assert.Equal(t, pid, m.PID)
	assert.Equal(t, []string{"count", "hold"}, m.Kinds)

	r.kill() // SIGKILL: no chance to remove anything
	// The index keeps the last renewal's expiry: no live node of the
	// prefix is left to trim it.
	score, err := rdb.ZScore(ctx, prefix+":members", m.Name).Result()
	require.NoError(t, err, "killed, the record stays indexed")
	expires := time.UnixMicro(int64(score))
	redisNow := func() time.Time {
		now, err := rdb.Time(ctx).Result()
		require.NoError(t, err)
		return now
	}
	// Redis's clock is read after each listing: a record missing while
	// that clock is still before the expiry went early.
	listed := len(members(t, observer)) == 1
	if now := redisNow(); now.Before(expires) {
		assert.True(t, listed, "killed, the record lives until its expiry (%v left)", expires.Sub(now))
	}
	waitFor(t, 3*shortLease, "the killed replica's record to expire", func() bool {
		if len(members(t, observer)) == 1 {
			return false
		}
		now := redisNow()
		require.False(t, now.Before(expires), "the record left the listing %v before its expiry", expires.Sub(now))
		return true
	})
	// The key's time to live counts whole milliseconds, and Redis drops
	// it once its last millisecond has passed, while the listing compares
	// microseconds: the key may outlive the listing by a millisecond.
	waitFor(t, shortLease, "the record's key to expire in Redis", func() bool {
		n, err := rdb.Exists(ctx, prefix+":member:"+m.Name).Result()
		require.NoError(t, err)
		return n == 0
	})
}
