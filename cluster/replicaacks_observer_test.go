package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/require"
)

// A node whose Redis calls are observed waits for its replicas all the
// same: the observed client hides the client's type, so the master that
// holds a task is found from the client the node was given.
func TestReplicaAcksWithAnObserverOfRedisCalls(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	ctx := context.Background()
	obs := cluster.Observer{RedisCall: func(cluster.RedisCall) {}}
	n := newClusterNode(t, c, "{acksobs}", nil, cluster.WithReplicaAcks(1, 10*time.Second), cluster.WithObserver(obs))
	id, err := n.Schedule(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err, "a replica is up: the schedule is acknowledged")
	_, err = n.Cancel(ctx, id)
	require.NoError(t, err, "a replica is up: the cancel is acknowledged")
}
