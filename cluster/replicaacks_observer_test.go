package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicaAcksWithAnObserverReportTheScripts: under WithReplicaAcks a
// node with an Observer runs Schedule, ScheduleMany and Cancel on the
// master's connection and waits there, and its observer hears of each
// script as without replica acknowledgements.
func TestReplicaAcksWithAnObserverReportTheScripts(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	var mu sync.Mutex // guards scripts
	var scripts []string
	n := newNode(t, srv, nil, cluster.WithReplicaAcks(1, 10*time.Millisecond),
		cluster.WithObserver(cluster.Observer{RedisCall: func(c cluster.RedisCall) {
			mu.Lock()
			defer mu.Unlock()
			scripts = append(scripts, c.Script)
		}}))
	ctx := context.Background()

	_, err := n.Schedule(ctx, "k", nil, time.Now().Add(time.Hour), cluster.WithID("a"))
	require.ErrorIs(t, err, cluster.ErrNotReplicated, "no replica acknowledges")
	_, err = n.ScheduleMany(ctx, []cluster.ScheduleManyParams{{Kind: "k", Due: time.Now().Add(time.Hour)}})
	require.ErrorIs(t, err, cluster.ErrNotReplicated)
	res, err := n.Cancel(ctx, "a")
	require.ErrorIs(t, err, cluster.ErrNotReplicated)
	assert.False(t, res.Removed, "an unacknowledged cancel says nothing")

	mu.Lock()
	defer mu.Unlock()
	assert.Subset(t, scripts, []string{"schedule", "schedule many", "cancel"})
}
