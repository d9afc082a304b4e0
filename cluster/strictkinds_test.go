package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// TestAProducerWithoutHandlersSchedulesForAWorkerStartedLater schedules a
// kind from a node with no handler that never starts; the task waits
// pending until a worker for the kind starts, and then runs.
func TestAProducerWithoutHandlersSchedulesForAWorkerStartedLater(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	producer := newNode(t, srv, nil)
	id, err := producer.Schedule(ctx, "email", []byte("hi"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c, err := producer.Counts(ctx); err != nil || c.Pending != 1 {
		t.Fatalf("counts %+v, %v", c, err)
	}
	ran := make(chan string, 1)
	worker := newNode(t, srv, map[string]cluster.Handler{"email": func(_ context.Context, task cluster.Task) error {
		ran <- task.ID
		return nil
	}})
	start(t, worker)
	if got := recv(t, ran, 10*time.Second, "the run on the worker"); got != id {
		t.Fatalf("ran %s, want %s", got, id)
	}
}
