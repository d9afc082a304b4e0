package cluster

import (
	"context"
	"testing"
	"time"
)

// TestNoObserverAllocatesNothing checks that a node without an observer
// pays no allocation for the hooks: every call a run, a claim and a
// Schedule make into observer.go.
func TestNoObserverAllocatesNothing(t *testing.T) {
	n := &Node{cfg: defaultConfig()}
	ctx := context.Background()
	task := Task{ID: "id", Kind: "k"}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := n.metadataOf(ctx, "schedule k", "k"); err != nil {
			t.Fatal(err)
		}
		n.observeScheduled(ctx, "k")
		n.observeClaim("k", time.Now().UnixMicro())
		obs := n.observeRun(ctx, task, "")
		obs.ended(n, OutcomeLost, nil)
		obs.recorded(n, OutcomeSucceeded, "done", nil)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run without an observer, want 0", allocs)
	}
	if hook := observeRedis(nil); hook != nil {
		t.Fatal("observeRedis without a report makes a hook: the driver would wrap its client")
	}
}

// BenchmarkNoObserverHooks measures what the hooks cost a node without an
// observer per task: every call into observer.go that a Schedule, a claim
// and a run make.
func BenchmarkNoObserverHooks(b *testing.B) {
	n := &Node{cfg: defaultConfig()}
	ctx := context.Background()
	task := Task{ID: "id", Kind: "k"}
	due := time.Now().UnixMicro()
	b.ReportAllocs()
	for range b.N {
		if _, err := n.metadataOf(ctx, "schedule k", "k"); err != nil {
			b.Fatal(err)
		}
		n.observeScheduled(ctx, "k")
		n.observeClaim("k", due)
		obs := n.observeRun(ctx, task, "")
		obs.recorded(n, OutcomeSucceeded, "done", nil)
	}
}

// TestRunHookReturningNilKeepsTheHandlersCtx: a Run hook that returns nil
// leaves the handler its own ctx rather than a nil one.
func TestRunHookReturningNilKeepsTheHandlersCtx(t *testing.T) {
	cfg := defaultConfig()
	cfg.observer.Run = func(context.Context, Task, map[string]string) context.Context { return nil }
	n := &Node{cfg: cfg}
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "handler's")
	if got := n.observeRun(ctx, Task{ID: "id"}, "").ctx; got != ctx {
		t.Fatalf("handler's ctx %v, want %v", got, ctx)
	}
}
