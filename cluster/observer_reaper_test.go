package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// pendingRecorder keeps the last pending sample a node reported, by kind.
type pendingRecorder struct {
	mu   sync.Mutex // guards last
	last map[string]cluster.PendingSample
	// sampled receives a signal after each sample.
	sampled chan struct{}
}

func newPendingRecorder() *pendingRecorder {
	return &pendingRecorder{sampled: make(chan struct{}, 64)}
}

func (r *pendingRecorder) observer() cluster.Observer {
	return cluster.Observer{PendingSampled: func(samples []cluster.PendingSample) {
		last := make(map[string]cluster.PendingSample, len(samples))
		for _, s := range samples {
			last[s.Kind] = s
		}
		r.mu.Lock()
		r.last = last
		r.mu.Unlock()
		select {
		case r.sampled <- struct{}{}:
		default:
		}
	}}
}

func (r *pendingRecorder) sample(kind string) cluster.PendingSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[kind]
}

// TestPendingSamplesCountEachPartitionOnceOverTheNodes runs two nodes,
// each the owner of about half the partitions as a reaper and the backup
// of the others: the sums of their samples are the true pending counts,
// each node reporting a share, and the oldest overdue task is the
// largest of theirs.
func TestPendingSamplesCountEachPartitionOnceOverTheNodes(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	h := map[string]cluster.Handler{"later": func(context.Context, cluster.Task) error { return nil }}
	recs := []*pendingRecorder{newPendingRecorder(), newPendingRecorder()}
	var nodes []*cluster.Node
	for _, r := range recs {
		nodes = append(nodes, newNode(t, srv, h, cluster.WithObserver(r.observer())))
	}
	const later, overdue = 40, 30
	for range later {
		_, err := nodes[0].Schedule(ctx, "later", nil, time.Now().Add(time.Hour))
		require.NoError(t, err)
	}
	overdueSince := time.Now().Add(-5 * time.Second)
	for range overdue {
		_, err := nodes[0].Schedule(ctx, "nobody", nil, overdueSince)
		require.NoError(t, err)
	}
	for _, n := range nodes {
		start(t, n)
	}
	sum := func(kind string) (pending int, oldest time.Duration) {
		for _, r := range recs {
			s := r.sample(kind)
			pending += s.Pending
			oldest = max(oldest, s.OldestOverdue)
		}
		return pending, oldest
	}
	// Until both nodes have seen each other, each owns every partition.
	waitFor(t, 20*time.Second, "samples of two nodes that share the partitions", func() bool {
		for _, n := range nodes {
			require.NoError(t, n.SampleTimeline(ctx))
		}
		p, _ := sum("later")
		return p == later && recs[0].sample("later").Pending > 0 && recs[1].sample("later").Pending > 0
	})
	p, oldest := sum("later")
	assert.Equal(t, later, p)
	assert.Zero(t, oldest)
	p, oldest = sum("nobody")
	assert.Equal(t, overdue, p)
	assert.GreaterOrEqual(t, oldest, 4*time.Second)
	assert.Less(t, oldest, time.Minute)
	assert.Equal(t, int64(later+overdue), counts(t, nodes[0]).Pending)
}

// TestPendingIsSampledAtStartEvenWithoutTheTimeline: a node that records
// no timeline still samples for its observer, first at its start.
func TestPendingIsSampledAtStartEvenWithoutTheTimeline(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newPendingRecorder()
	n := newNode(t, srv, map[string]cluster.Handler{"later": func(context.Context, cluster.Task) error { return nil }},
		cluster.WithObserver(rec.observer()), cluster.WithTimelineRetention(0))
	for range 3 {
		_, err := n.Schedule(context.Background(), "later", nil, time.Now().Add(time.Hour))
		require.NoError(t, err)
	}
	start(t, n)
	recv(t, rec.sampled, 10*time.Second, "the sample at start")
	assert.Equal(t, cluster.PendingSample{Kind: "later", Pending: 3}, rec.sample("later"))
}

// TestReaperReportsTheRunsLostWithANodeThenTheDeath: a node dies (StopNow)
// twice while running a task; the surviving node's reaper reports each
// lost run, the first returning the task to pending, the second, past
// the limit of one lost run, making it dead.
func TestReaperReportsTheRunsLostWithANodeThenTheDeath(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	lost := make(chan cluster.LostRun, 4)
	reaper := newNode(t, srv, map[string]cluster.Handler{"other": func(context.Context, cluster.Task) error { return nil }},
		cluster.WithObserver(cluster.Observer{RunLost: func(l cluster.LostRun) { lost <- l }}),
		cluster.WithMaxLostRuns(1))
	start(t, reaper)
	id, err := reaper.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	for i, dead := range []bool{false, true} {
		started := make(chan struct{}, 1)
		dying := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, _ cluster.Task) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}})
		start(t, dying)
		recv(t, started, 10*time.Second, "the run")
		dying.StopNow() // the run is left to its lease
		l := recv(t, lost, 10*testLease, "the lost run")
		assert.Equal(t, cluster.LostRun{ID: id, Kind: "k", Dead: dead}, l, "lost run %d", i+1)
	}
	info, ok, err := reaper.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, cluster.Dead, info.State)
	assert.Equal(t, 2, info.Lost)
	select {
	case l := <-lost:
		t.Fatalf("a lost run reported twice: %+v", l)
	default:
	}
}
