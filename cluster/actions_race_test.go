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

// TestRescheduleRacingAClaimEitherMovesTheTaskOrIsRefused reschedules tasks
// an hour away while another node, on its own connection, claims them as
// they fall due: a task the action moved never runs, and a task it refused
// (claimed first) runs exactly once.
func TestRescheduleRacingAClaimEitherMovesTheTaskOrIsRefused(t *testing.T) {
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
		id, err := ops.Schedule(ctx, "k", nil, now.Add(time.Duration(i)*10*time.Millisecond), cluster.WithID(fmt.Sprintf("r%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	later := now.Add(time.Hour)
	moved := map[string]bool{}
	refused := 0
	// The tasks fall due one every 10 ms, so the later ones are moved
	// while the worker claims them.
	for _, id := range ids {
		err := ops.Reschedule(ctx, id, later)
		switch {
		case err == nil:
			moved[id] = true
		case errors.Is(err, cluster.ErrWrongState), errors.Is(err, cluster.ErrNotFound):
			refused++
		default:
			t.Fatal(err)
		}
	}
	for range refused {
		recv(t, ran, 10*time.Second, "a run of a task the action refused")
	}
	worker.StopNow()
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if moved[id] {
			if runs[id] != 0 {
				t.Errorf("task %s moved an hour away, yet ran %d times", id, runs[id])
			}
			info, ok, err := ops.Get(ctx, id)
			if err != nil || !ok || info.State != cluster.Pending || !info.Due.Equal(later.Truncate(time.Microsecond)) {
				t.Errorf("moved task %s: %+v %v %v", id, info, ok, err)
			}
		} else if runs[id] != 1 {
			t.Errorf("task %s refused, ran %d times, want 1", id, runs[id])
		}
	}
	t.Logf("%d moved, %d refused as claimed first", len(moved), refused)
}
