package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestDriverPauseResume: Pause and Resume change PausedKinds (sorted), a
// paused kind's due task is not claimed, and Ping answers.
func TestDriverPauseResume(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	if err := d.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	mustSchedule(t, d.Store(), dueTask("a"))
	for _, k := range []string{"k", "b", "k"} {
		if err := d.Pause(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if kinds, err := d.PausedKinds(ctx); err != nil || fmt.Sprint(kinds) != "[b k]" {
		t.Fatalf("PausedKinds = %v, %v; want [b k]", kinds, err)
	}
	if c, err := d.Store().Claim(ctx, "a", token(t), testLease); err != nil || c.Outcome != pgdriver.ClaimPaused {
		t.Fatalf("Claim of a paused kind = %+v, %v; want paused", c, err)
	}
	if err := d.Resume(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if kinds, err := d.PausedKinds(ctx); err != nil || fmt.Sprint(kinds) != "[b]" {
		t.Fatalf("PausedKinds after Resume = %v, %v; want [b]", kinds, err)
	}
	mustClaim(t, d.Store(), "a")
	if err := d.Pause(ctx, ""); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Pause(\"\"): %v", err)
	}
	if _, err := pgdriver.NewDriver(nil); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("NewDriver(nil): %v", err)
	}
}
