package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

type invoice struct {
	Customer string
	Cents    int
}

// TestTypedHandlerGetsTheValueAndAnUndecodablePayloadGoesDeadAtOnce runs a
// typed task, then a task of the same kind whose payload is not an invoice:
// that one is dead after one run, with the decode error, despite its
// retries left.
func TestTypedHandlerGetsTheValueAndAnUndecodablePayloadGoesDeadAtOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	got := make(chan invoice, 2)
	n, err := cluster.New(client(t, srv), append(testOptions(), cluster.WithMaxRetries(5))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.StopNow)
	if err := cluster.HandleJSON(n, "invoice", func(_ context.Context, v invoice) error {
		got <- v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, n)

	if _, err := cluster.ScheduleJSON(ctx, n, "invoice", invoice{"acme", 1250}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if v := recv(t, got, 10*time.Second, "the typed run"); v != (invoice{"acme", 1250}) {
		t.Fatalf("handler got %+v", v)
	}

	id, err := n.Schedule(ctx, "invoice", []byte(`{"Customer":"acme","Amount":3}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the undecodable task dead", func() bool {
		info, ok, err := n.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Dead
	})
	info, _, _ := n.Get(ctx, id)
	if info.Attempt != 1 || !strings.Contains(info.LastError, "decode the payload") || !strings.Contains(info.LastError, "Amount") {
		t.Fatalf("dead task %+v", info)
	}
	select {
	case v := <-got:
		t.Fatalf("handler ran with %+v", v)
	default:
	}

	_, err = cluster.ScheduleJSON(ctx, n, "invoice", func() {}, time.Now())
	if !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("unencodable payload: %v", err)
	}
	if err := cluster.HandleJSON[invoice](n, "other", nil); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("nil typed handler: %v", err)
	}
}
