package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// TestRunNowRacingAClaimRunsEachTaskExactlyOnce brings tasks forward while
// another node claims them as they fall due: whether the action moved the
// task or was refused because the claim came first, each task runs exactly
// once and none is lost.
func TestRunNowRacingAClaimRunsEachTaskExactlyOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	// runs counts each task's runs; guarded by mu.
	var mu sync.Mutex
	runs := map[string]int{}
	ran := make(chan struct{}, 100)
	record := func(_ context.Context, task cluster.Task) error {
		mu.Lock()
		runs[task.ID]++
		mu.Unlock()
		ran <- struct{}{}
		return nil
	}
	worker := newNode(t, srv, map[string]cluster.Handler{"k": record})
	start(t, worker)
	ops := newNode(t, srv, map[string]cluster.Handler{"k": record})

	now := time.Now()
	var ids []string
	for i := range 40 {
		id, err := ops.Schedule(ctx, "k", nil, now.Add(time.Duration(i)*10*time.Millisecond), cluster.WithID(fmt.Sprintf("n%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	moved, refused := 0, 0
	for _, id := range ids {
		err := ops.RunNow(ctx, id)
		switch {
		case err == nil:
			moved++
		case errors.Is(err, cluster.ErrWrongState), errors.Is(err, cluster.ErrNotFound):
			refused++
		default:
			t.Fatal(err)
		}
	}
	for range ids {
		recv(t, ran, 10*time.Second, "a run of a task brought forward or claimed first")
	}
	worker.StopNow()
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if runs[id] != 1 {
			t.Errorf("task %s ran %d times, want 1", id, runs[id])
		}
	}
	t.Logf("%d brought forward, %d refused as claimed first", moved, refused)
}
