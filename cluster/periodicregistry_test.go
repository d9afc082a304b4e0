package cluster_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// periodicTasks lists the periodic registry through n.
func periodicTasks(t *testing.T, n *cluster.Node) []cluster.PeriodicInfo {
	t.Helper()
	ps, err := n.PeriodicTasks(context.Background())
	require.NoError(t, err)
	return ps
}

func TestPeriodicTasksListsDeclarationsWithTheirNodesAndLastRun(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	nightly := cron.MustParse("0 3 * * *")
	const period = 200 * time.Millisecond
	ran := make(chan cluster.Task, 100)
	failing := make(chan cluster.Task, 100)
	var nodes []*cluster.Node
	for range 2 {
		n := newNode(t, srv, nil)
		require.NoError(t, n.Periodic("nightly", nightly, func(context.Context, cluster.Task) error { return nil }))
		require.NoError(t, n.Periodic("tick", everyTick(period), func(_ context.Context, task cluster.Task) error {
			select {
			case ran <- task:
			default:
			}
			return nil
		}))
		nodes = append(nodes, n)
	}
	// Only the first node declares "flaky".
	require.NoError(t, nodes[0].Periodic("flaky", everyTick(period), func(_ context.Context, task cluster.Task) error {
		select {
		case failing <- task:
		default:
		}
		return errors.New("no luck")
	}, cluster.WithTaskTimeout(time.Minute)))
	producer := newNode(t, srv, nil)
	assert.Empty(t, periodicTasks(t, producer), "nothing declared before Start")
	for _, n := range nodes {
		start(t, n)
	}

	ps := periodicTasks(t, producer)
	require.Len(t, ps, 3)
	assert.Equal(t, []string{"flaky", "nightly", "tick"}, []string{ps[0].Name, ps[1].Name, ps[2].Name})
	both := []string{nodes[0].Name(), nodes[1].Name()}
	slices.Sort(both)
	assert.Equal(t, []string{nodes[0].Name()}, ps[0].Nodes)
	assert.Equal(t, both, ps[1].Nodes)
	assert.Equal(t, "0 3 * * *", ps[1].Trigger, "a trigger with String() shows it")
	assert.Equal(t, "scheduler.TriggerFunc", ps[2].Trigger, "else its type")
	assert.Equal(t, nightly.Next(time.Now()), ps[1].Next)
	assert.True(t, ps[2].Next.After(time.Now().Add(-period)), "next tick %v", ps[2].Next)

	// A run is recorded as the last one, by the node that ran it.
	got := recv(t, ran, 10*time.Second, "a tick")
	waitFor(t, 10*time.Second, "the tick's run in the registry", func() bool {
		p := periodicTasks(t, producer)[2]
		return p.LastRun != nil && !p.LastRun.Due.Before(got.Due)
	})
	last := periodicTasks(t, producer)[2].LastRun
	assert.Equal(t, cluster.OutcomeSucceeded, last.Outcome)
	assert.Empty(t, last.Error)
	assert.Contains(t, both, last.Node)
	assert.False(t, last.Ended.Before(last.Started), "ended %v before started %v", last.Ended, last.Started)
	assert.Nil(t, periodicTasks(t, producer)[1].LastRun, "nightly never ran")

	bad := recv(t, failing, 10*time.Second, "a flaky run")
	waitFor(t, 10*time.Second, "the flaky run in the registry", func() bool {
		p := periodicTasks(t, producer)[0]
		return p.LastRun != nil && !p.LastRun.Due.Before(bad.Due)
	})
	last = periodicTasks(t, producer)[0].LastRun
	assert.Equal(t, cluster.OutcomeFailed, last.Outcome)
	assert.Equal(t, "no luck", last.Error)
	assert.Equal(t, nodes[0].Name(), last.Node)

	// Declarations expire with their nodes.
	nodes[0].StopNow()
	waitFor(t, 3*testLease, "flaky to expire with its only node", func() bool {
		ps := periodicTasks(t, producer)
		return len(ps) == 2 && ps[0].Name == "nightly" && len(ps[0].Nodes) == 1
	})
	nodes[1].StopNow()
	waitFor(t, 3*testLease, "every declaration to expire", func() bool {
		return len(periodicTasks(t, producer)) == 0
	})
}
