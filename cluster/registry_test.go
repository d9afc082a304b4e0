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

	before := time.Now()
	start(t, a)
	start(t, b)
	ms := members(t, producer)
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
	assert.WithinDuration(t, before, ma.Started, 2*time.Second)
	assert.WithinDuration(t, time.Now(), ma.Heartbeat, 2*time.Second)
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

func TestKilledReplicaRecordExpiresAfterALease(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const prefix = "{killed}"
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
	assert.NotEmpty(t, members(t, observer), "killed, the record lives until its expiry")
	waitFor(t, 3*shortLease, "the killed replica's record to expire", func() bool {
		return len(members(t, observer)) == 0
	})
	n, err := rdb.Exists(context.Background(), prefix+":member:"+m.Name).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the record's key expired in Redis")
}
