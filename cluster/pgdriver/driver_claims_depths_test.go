package pgdriver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// TestPendingDepthSamples: a sample of pending depth is written as the
// minute's "p" and "o" of its kind and partition, a later sample of the
// minute replaces it (within one call too, the later wins), and the
// timeline of runs (Store.Timeline) reads past the samples.
func TestPendingDepthSamples(t *testing.T) {
	ctx := context.Background()
	d, pool := newDriver(t)
	s := d.Store()
	mustSchedule(t, s, dueTask("a"))
	mustSchedule(t, s, dueTask("b"))
	tok, _ := mustClaim(t, s, "b")
	tl := driver.Timeline{Minute: 2000, TTL: time.Hour}
	if _, err := d.Complete(ctx, "b", "k", tok, time.Hour, driver.KeepDone{}, tl); err != nil {
		t.Fatal(err)
	}
	pa := s.PartitionOf("a")
	depths, err := d.PendingDepths(ctx, []int{pa})
	if err != nil || len(depths) != 1 || depths[0].Pending != 1 || !depths[0].Earliest.Equal(past) || depths[0].Kind != "k" {
		t.Fatalf("PendingDepths = %+v, %v; want one task of k pending since %v", depths, err, past)
	}
	sample := func(pending int, overdue time.Duration) driver.PendingDepth {
		return driver.PendingDepth{Partition: pa, Kind: "k", Pending: pending, Overdue: overdue}
	}
	read := func() map[string]int64 {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT field, count FROM stpe_timeline WHERE minute = 2000 AND partition = $1 AND field IN ('p', 'o')`, pa)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		var (
			field string
			count int64
		)
		if _, err := pgx.ForEachRow(rows, []any{&field, &count}, func() error { got[field] = count; return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := d.RecordPendingDepths(ctx, []driver.PendingDepth{sample(5, time.Second)}, tl); err != nil {
		t.Fatal(err)
	}
	if got := read(); got["p"] != 5 || got["o"] != time.Second.Microseconds() {
		t.Fatalf("first sample = %v; want p 5, o 1s", got)
	}
	if err := d.RecordPendingDepths(ctx, []driver.PendingDepth{sample(7, 0), sample(3, time.Minute)}, tl); err != nil {
		t.Fatal(err)
	}
	if got := read(); got["p"] != 3 || got["o"] != time.Minute.Microseconds() {
		t.Fatalf("sample replaced = %v; want p 3, o 1m (the later of the call)", got)
	}
	if m, err := s.Timeline(ctx, 2000, 2000); err != nil || len(m) != 1 || m[0].Runs != 1 {
		t.Fatalf("Timeline beside the samples = %+v, %v; want the one run", m, err)
	}
	if err := d.RecordPendingDepths(ctx, []driver.PendingDepth{{Partition: s.Partitions(), Kind: "k"}}, tl); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("a sample of a partition out of range: %v; want an invalid argument", err)
	}
}
