package pgdriver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// TestCombinedCompletionsAnswerAsLoneOnes: completions in one statement
// record each run its token holds (Done) and no other (Lost: a wrong
// token, a task never stored), and count the runs in the timeline, many
// of them in one row (more runs than partitions), summed.
func TestCombinedCompletionsAnswerAsLoneOnes(t *testing.T) {
	ctx := context.Background()
	s := combineStore(t)
	const held = 20
	var calls []*batchCall[completeAsk, Outcome]
	e := Ending{Timeline: driver.Timeline{Minute: 7, TTL: time.Hour}}
	for i := range held {
		id := fmt.Sprint("t", i)
		if _, err := s.Schedule(ctx, Task{ID: id, Kind: "k", Due: time.Now().Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Claim(ctx, id, "tok-"+id, time.Hour); err != nil || c.Outcome != ClaimWon {
			t.Fatalf("claim %s: %+v, %v", id, c, err)
		}
		calls = append(calls, &batchCall[completeAsk, Outcome]{ctx: ctx, q: completeAsk{id: id, token: "tok-" + id, e: e}})
	}
	if _, err := s.Schedule(ctx, Task{ID: "other", Kind: "k", Due: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, "other", "right", time.Hour); err != nil {
		t.Fatal(err)
	}
	calls = append(calls,
		&batchCall[completeAsk, Outcome]{ctx: ctx, q: completeAsk{id: "other", token: "wrong", e: e}},
		&batchCall[completeAsk, Outcome]{ctx: ctx, q: completeAsk{id: "missing", token: "x", e: e}})
	s.completeCombined(ctx, calls)
	for i, c := range calls {
		want := OutcomeDone
		if i >= held {
			want = OutcomeLost
		}
		if c.err != nil || c.a != want {
			t.Errorf("completion of %s: %v, %v; want %v", c.q.id, c.a, c.err, want)
		}
	}
	if lone, err := s.Complete(ctx, "other", "wrong", e); err != nil || lone != OutcomeLost {
		t.Fatalf("lone completion with a wrong token: %v, %v", lone, err)
	}
	var left, counted int
	if err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM stpe_tasks WHERE id LIKE 't%'),
    (SELECT coalesce(sum(count), 0) FROM stpe_timeline WHERE minute = 7 AND kind = 'k')`).Scan(&left, &counted); err != nil {
		t.Fatal(err)
	}
	if left != 0 || counted != held {
		t.Fatalf("after the completions: %d tasks left, %d runs counted; want 0 and %d", left, counted, held)
	}
}
