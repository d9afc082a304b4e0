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

// claimRace races an action against another node's claims: 40 tasks of kind
// "k", due one every 10 ms from the start, stored through ops (a node that
// is not started) while a started worker claims them as they fall due. Each
// run is counted.
type claimRace struct {
	ops    *cluster.Node
	worker *cluster.Node
	ids    []string
	start  time.Time
	ran    chan struct{} // one value per run

	mu   sync.Mutex // guards runs
	runs map[string]int
}

func newClaimRace(t *testing.T, idPrefix string) *claimRace {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	r := &claimRace{ran: make(chan struct{}, 100), runs: map[string]int{}}
	record := func(_ context.Context, task cluster.Task) error {
		r.mu.Lock()
		r.runs[task.ID]++
		r.mu.Unlock()
		r.ran <- struct{}{}
		return nil
	}
	r.worker = newNode(t, srv, map[string]cluster.Handler{"k": record})
	start(t, r.worker)
	r.ops = newNode(t, srv, map[string]cluster.Handler{"k": record})
	r.start = time.Now()
	for i := range 40 {
		id, err := r.ops.Schedule(context.Background(), "k", nil, r.start.Add(time.Duration(i)*10*time.Millisecond),
			cluster.WithID(fmt.Sprintf("%s%02d", idPrefix, i)))
		if err != nil {
			t.Fatal(err)
		}
		r.ids = append(r.ids, id)
	}
	return r
}

// act applies action to every task, reporting the IDs it moved and how many
// it refused because the claim came first; any other error fails the test.
func (r *claimRace) act(t *testing.T, action func(id string) error) (moved map[string]bool, refused int) {
	t.Helper()
	moved = map[string]bool{}
	for _, id := range r.ids {
		err := action(id)
		switch {
		case err == nil:
			moved[id] = true
		case errors.Is(err, cluster.ErrWrongState), errors.Is(err, cluster.ErrNotFound):
			refused++
		default:
			t.Fatal(err)
		}
	}
	return moved, refused
}

// TestRescheduleRacingAClaimEitherMovesTheTaskOrIsRefused reschedules tasks
// an hour away while another node, on its own connection, claims them as
// they fall due: a task the action moved never runs, and a task it refused
// (claimed first) runs exactly once.
func TestRescheduleRacingAClaimEitherMovesTheTaskOrIsRefused(t *testing.T) {
	r := newClaimRace(t, "r")
	ctx := context.Background()
	later := r.start.Add(time.Hour)
	// The tasks fall due one every 10 ms, so the later ones are moved
	// while the worker claims them.
	moved, refused := r.act(t, func(id string) error { return r.ops.Reschedule(ctx, id, later) })
	for range refused {
		recv(t, r.ran, 10*time.Second, "a run of a task the action refused")
	}
	r.worker.StopNow()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.ids {
		if moved[id] {
			if r.runs[id] != 0 {
				t.Errorf("task %s moved an hour away, yet ran %d times", id, r.runs[id])
			}
			info, ok, err := r.ops.Get(ctx, id)
			if err != nil || !ok || info.State != cluster.Pending || !info.Due.Equal(later.Truncate(time.Microsecond)) {
				t.Errorf("moved task %s: %+v %v %v", id, info, ok, err)
			}
		} else if r.runs[id] != 1 {
			t.Errorf("task %s refused, ran %d times, want 1", id, r.runs[id])
		}
	}
	t.Logf("%d moved, %d refused as claimed first", len(moved), refused)
}

// TestRunNowRacingAClaimRunsEachTaskExactlyOnce brings tasks forward while
// another node claims them as they fall due: whether the action moved the
// task or was refused because the claim came first, each task runs exactly
// once and none is lost.
func TestRunNowRacingAClaimRunsEachTaskExactlyOnce(t *testing.T) {
	r := newClaimRace(t, "n")
	ctx := context.Background()
	moved, refused := r.act(t, func(id string) error { return r.ops.RunNow(ctx, id) })
	for range r.ids {
		recv(t, r.ran, 10*time.Second, "a run of a task brought forward or claimed first")
	}
	r.worker.StopNow()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.ids {
		if r.runs[id] != 1 {
			t.Errorf("task %s ran %d times, want 1", id, r.runs[id])
		}
	}
	t.Logf("%d brought forward, %d refused as claimed first", len(moved), refused)
}
