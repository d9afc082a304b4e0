package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/require"
)

// failoverLedger records what the failover test acknowledged and ran.
type failoverLedger struct {
	mu     sync.Mutex             // guards acked, errors and starts
	acked  map[string]time.Time   // tasks whose Schedule returned nil, when
	errors int                    // Schedule calls that failed
	starts map[string][]time.Time // run starts by task
}

// TestFailoverOfAMasterLosesNoAcknowledgedTask kills the master of
// the prefix's own slot (the cluster-wide records, and a third of the
// partitions) with SIGKILL while three nodes run tasks and a
// producer schedules more under WithReplicaAcks(1, ...); the replica is
// promoted. Every task whose Schedule returned nil runs at least once, and
// a task runs twice only if its first run started before the failover was
// over: its claim or completion was written to the dead master and may not
// have reached the replica. The killed master then comes back as a replica,
// without which no Schedule is acknowledged any more.
func TestFailoverOfAMasterLosesNoAcknowledgedTask(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{NodeTimeout: redistest.FailoverNodeTimeout})
	ctx := context.Background()
	const p = "{failover}"
	led := &failoverLedger{acked: map[string]time.Time{}, starts: map[string][]time.Time{}}
	h := func(_ context.Context, task cluster.Task) error {
		led.mu.Lock()
		led.starts[task.ID] = append(led.starts[task.ID], time.Now())
		led.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // a run in flight when the master dies
		return nil
	}
	var nodes []*cluster.Node
	for range 3 {
		// A lease well above the stalls of a busy CI box, so that no
		// run is repeated for a stall rather than the failover.
		n := newClusterNode(t, c, p, map[string]cluster.Handler{"k": h},
			cluster.WithReplicaAcks(1, time.Second), cluster.WithLease(5*time.Second))
		start(t, n)
		nodes = append(nodes, n)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			id, err := nodes[i%3].Schedule(sctx, "k", nil, time.Now().Add(time.Duration(i%50)*10*time.Millisecond))
			cancel()
			led.mu.Lock()
			if err == nil {
				led.acked[id] = time.Now()
			} else {
				led.errors++
			}
			led.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()

	ackedBy := func(k int) func() bool {
		return func() bool {
			led.mu.Lock()
			defer led.mu.Unlock()
			return len(led.acked) >= k
		}
	}
	waitFor(t, 20*time.Second, "tasks to be acknowledged before the kill", ackedBy(100))
	killAt := time.Now()
	killed, err := c.KillMasterFor(ctx, p)
	require.NoError(t, err)
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, c.WaitHealthy(hctx))
	healedAt := time.Now()
	// The promoted master has no replica left to acknowledge a Schedule
	// until the killed one is back, as its replica.
	require.NoError(t, killed.Restart())
	require.NoError(t, c.WaitHealthy(hctx))
	backAt := time.Now()
	led.mu.Lock()
	before := len(led.acked)
	led.mu.Unlock()
	waitFor(t, 30*time.Second, "tasks to be acknowledged after the failover", ackedBy(before+100))
	close(stop)
	wg.Wait()

	led.mu.Lock()
	acked := len(led.acked)
	led.mu.Unlock()
	waitFor(t, 60*time.Second, "every acknowledged task to run", func() bool {
		led.mu.Lock()
		defer led.mu.Unlock()
		for id := range led.acked {
			if len(led.starts[id]) == 0 {
				return false
			}
		}
		return true
	})
	waitFor(t, 60*time.Second, "the store to empty", func() bool { return counts(t, nodes[0]) == cluster.Counts{} })
	for _, n := range nodes {
		require.NoError(t, n.Stop(ctx))
	}

	led.mu.Lock()
	defer led.mu.Unlock()
	repeats := 0
	for id, starts := range led.starts {
		if len(starts) > 1 {
			repeats++
			if !starts[0].Before(healedAt) {
				t.Errorf("task %s ran %d times, first at %v, after the failover was over (%v)", id, len(starts), starts[0], healedAt)
			}
		}
	}
	t.Logf("killed %s; failover took %v, the replica was back %v later; %d tasks acknowledged, %d Schedule calls failed, %d tasks ran twice or more",
		killed.Addr, healedAt.Sub(killAt), backAt.Sub(healedAt), acked, led.errors, repeats)
}
