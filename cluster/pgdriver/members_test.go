package pgdriver_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestMembersRenewExpireAndLeave: a renewed node is a member until its
// time to live runs out on the database's clock, then the next renewal
// removes it; a renewal keeps the start and moves the heartbeat; a node
// that leaves is gone at once.
func TestMembersRenewExpireAndLeave(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	a := pgdriver.Member{ID: "a", Host: "h1", PID: 10, Version: "v1", Kinds: []string{"mail", "sms"}, Claims: true}
	b := pgdriver.Member{ID: "b", Host: "h2", PID: 20, Version: "v1"}
	first, err := s.RenewMember(ctx, a, time.Hour)
	if err != nil || len(first) != 1 || first[0].ID != "a" || !slices.Equal(first[0].Kinds, a.Kinds) || !first[0].Claims ||
		first[0].ExpiresAt.Sub(first[0].HeartbeatAt) != time.Hour {
		t.Fatalf("first renewal = %+v, %v", first, err)
	}
	got, err := s.RenewMember(ctx, b, time.Hour)
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" || got[1].Kinds == nil {
		t.Fatalf("members after b joined = %+v, %v", got, err)
	}
	a.Stopping = true
	got, err = s.RenewMember(ctx, a, time.Hour)
	if err != nil || !got[0].Stopping || !got[0].StartedAt.Equal(first[0].StartedAt) || !got[0].HeartbeatAt.After(first[0].HeartbeatAt) {
		t.Fatalf("second renewal of a = %+v, %v; want its start kept, its heartbeat later", got, err)
	}
	exec(t, pool, `UPDATE stpe_members SET expires_at = statement_timestamp() - interval '1 second' WHERE id = 'b'`)
	if got, err := s.Members(ctx); err != nil || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("members with b expired = %+v, %v", got, err)
	}
	if _, err := s.RenewMember(ctx, a, time.Hour); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM stpe_members").Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d member rows after a renewal (%v), want the expired b deleted", rows, err)
	}
	if err := s.LeaveMember(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Members(ctx); err != nil || len(got) != 0 {
		t.Fatalf("members after a left = %+v, %v", got, err)
	}
	if _, err := s.RenewMember(ctx, a, 0); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("RenewMember with no time to live: %v", err)
	}
}

// TestCursorMovesForwardOnly: a cursor starts where it is first set,
// moves forward, never back, keeps its place when given none, and takes
// the latest settings.
func TestCursorMovesForwardOnly(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	t1 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	steps := []struct {
		in   pgdriver.Cursor
		want time.Time
	}{
		{pgdriver.Cursor{Name: "r"}, time.Time{}},
		{pgdriver.Cursor{Name: "r", LastDue: t1}, t1},
		{pgdriver.Cursor{Name: "r", LastDue: t2, Misfire: "skip", Overlap: true}, t2},
		{pgdriver.Cursor{Name: "r", LastDue: t1}, t2},
		{pgdriver.Cursor{Name: "r"}, t2},
	}
	for i, st := range steps {
		got, err := s.AdvanceCursor(ctx, st.in)
		if err != nil || !got.LastDue.Equal(st.want) {
			t.Fatalf("step %d: AdvanceCursor(%+v) = %+v, %v; want last due %v", i, st.in, got, err, st.want)
		}
	}
	cursors, err := s.Cursors(ctx, []string{"r", "unknown"})
	if err != nil || len(cursors) != 1 {
		t.Fatalf("Cursors = %+v, %v", cursors, err)
	}
	if c := cursors["r"]; !c.LastDue.Equal(t2) || c.Misfire != "coalesce" || c.Overlap {
		t.Fatalf("cursor r = %+v; want %v with the last settings (coalesce, no overlap)", c, t2)
	}
}
