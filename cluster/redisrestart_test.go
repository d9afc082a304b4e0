package cluster_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/require"
)

func TestRedisCrashAndRestartWithAOFLosesNothingAcknowledged(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AOF: true})
	const n = 1000
	var mu sync.Mutex // guards runs
	runs := map[string]int{}
	h := map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error {
		mu.Lock()
		runs[task.ID]++
		mu.Unlock()
		return nil
	}}
	a, b := newNode(t, srv, h), newNode(t, srv, h)
	start(t, a)
	start(t, b)
	producer := newNode(t, srv, h)

	from := time.Now().Add(500 * time.Millisecond)
	for i := range n {
		due := from.Add(3 * time.Second * time.Duration(i) / n)
		_, err := producer.Schedule(context.Background(), "k", nil, due, cluster.WithID("t"+strconv.Itoa(i)))
		require.NoError(t, err)
	}
	ran := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(runs)
	}
	waitFor(t, 30*time.Second, "a task to run", func() bool { return ran() >= 1 })
	srv.Kill()
	t.Logf("%d of %d tasks ran before Redis was killed", ran(), n)
	require.NoError(t, srv.Restart())

	waitFor(t, 60*time.Second, "every acknowledged task to run", func() bool { return ran() == n })
	waitFor(t, 20*time.Second, "the store to empty", func() bool { return counts(t, producer) == cluster.Counts{} })
	mu.Lock()
	defer mu.Unlock()
	twice := 0
	for _, c := range runs {
		if c > 1 {
			twice++
		}
	}
	t.Logf("%d tasks ran twice (their completion was lost with Redis)", twice)
}
