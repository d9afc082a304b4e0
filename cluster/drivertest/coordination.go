package drivertest

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCoordination checks the driver's Coordination methods.
func runCoordination(t *testing.T, h Harness) {
	t.Run("Layout", func(t *testing.T) { checkLayout(t, h) })
	t.Run("Membership", func(t *testing.T) { checkMembership(t, h) })
	t.Run("PeriodicRecords", func(t *testing.T) { checkPeriodicRecords(t, h) })
	t.Run("Cursors", func(t *testing.T) { checkCursors(t, h) })
	t.Run("Notices", func(t *testing.T) { checkNotices(t, h) })
}

// waitFor is how long a check waits for the store to do what it must.
const waitFor = 10 * time.Second

func checkLayout(t *testing.T, h Harness) {
	ctx := context.Background()
	t.Run("a fresh keyspace records nothing until CheckLayout records it", func(t *testing.T) {
		d := h.Open(t, 6)
		n, err := d.RecordedPartitions(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		require.NoError(t, d.CheckLayout(ctx))
		n, err = d.RecordedPartitions(ctx)
		require.NoError(t, err)
		assert.Equal(t, 6, n)
	})
	t.Run("CheckLayout again, and from a second node, accepts the record; Prepare follows", func(t *testing.T) {
		d := h.Open(t, 3)
		require.NoError(t, d.CheckLayout(ctx))
		require.NoError(t, d.CheckLayout(ctx))
		second := h.Same(t, d)
		require.NoError(t, second.CheckLayout(ctx))
		require.NoError(t, second.Prepare(ctx))
		n, err := second.RecordedPartitions(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
	})
}

// member is a record with every field set.
func member(stopping bool) driver.Member {
	return driver.Member{Host: "host-a", PID: 4242, Version: "v1.2.3",
		Started: time.UnixMicro(time.Now().UnixMicro()), Concurrency: 8, Running: 3, Windowed: 5,
		Waiting: 2, Owned: 4, BackedUp: 1, Kinds: []string{"@nightly", "email"}, Stopping: stopping}
}

// liveNames are the names of the live claimers of m, sorted.
func liveNames(m driver.Membership) []string {
	var out []string
	for _, l := range m.Live {
		out = append(out, l.Name)
	}
	slices.Sort(out)
	return out
}

func checkMembership(t *testing.T, h Harness) {
	ctx := context.Background()
	const ttl = time.Minute
	t.Run("a claimer joins once, with its kinds and its record stamped by the store", func(t *testing.T) {
		d := h.Open(t, 4)
		rec := member(false)
		m, err := d.Renew(ctx, driver.Renewal{Node: "a", TTL: ttl, Claimer: true, Kinds: rec.Kinds, Record: rec})
		require.NoError(t, err)
		assert.True(t, m.Changed, "the first renewal joins the claimers")
		require.Equal(t, []driver.LiveNode{{Name: "a", Kinds: rec.Kinds}}, m.Live)
		assert.WithinDuration(t, time.Now(), m.Now, time.Minute, "the store's time")
		again, err := d.Renew(ctx, driver.Renewal{Node: "a", TTL: ttl, Claimer: true, Kinds: rec.Kinds, Record: rec})
		require.NoError(t, err)
		assert.False(t, again.Changed, "a renewal changes nothing")
		assert.False(t, again.Now.Before(m.Now), "the store's clock does not go back")

		members, err := d.Members(ctx)
		require.NoError(t, err)
		require.Len(t, members, 1)
		got := members[0]
		assert.Equal(t, again.Now, got.Heartbeat, "the heartbeat is the store's time of the renewal")
		assert.Equal(t, again.Now.Add(ttl), got.Expires)
		want := rec
		want.Name, want.Heartbeat, want.Expires = "a", got.Heartbeat, got.Expires
		assert.Equal(t, want, got)
	})
	t.Run("a second node joins, a stopping node leaves the claimers but keeps its record, a zero TTL removes it", func(t *testing.T) {
		a := h.Open(t, 4)
		b := h.Same(t, a)
		_, err := a.Renew(ctx, driver.Renewal{Node: "a", TTL: ttl, Claimer: true, Kinds: []string{"k"}, Record: member(false)})
		require.NoError(t, err)
		m, err := b.Renew(ctx, driver.Renewal{Node: "b", TTL: ttl, Claimer: true, Kinds: []string{"j"}, Record: member(false)})
		require.NoError(t, err)
		assert.True(t, m.Changed)
		assert.Equal(t, []string{"a", "b"}, liveNames(m))

		m, err = b.Renew(ctx, driver.Renewal{Node: "b", TTL: ttl, Claimer: false, Record: member(true)})
		require.NoError(t, err)
		assert.True(t, m.Changed, "leaving the claimers is a change")
		assert.Equal(t, []string{"a"}, liveNames(m))
		members, err := a.Members(ctx)
		require.NoError(t, err)
		require.Len(t, members, 2, "the stopping node keeps its record")
		for _, r := range members {
			assert.Equal(t, r.Name == "b", r.Stopping, "%s stopping", r.Name)
		}

		m, err = b.Renew(ctx, driver.Renewal{Node: "b"})
		require.NoError(t, err)
		assert.False(t, m.Changed, "b was no claimer any more")
		m, err = a.Renew(ctx, driver.Renewal{Node: "a"})
		require.NoError(t, err)
		assert.True(t, m.Changed, "a claimer that leaves is a change")
		members, err = a.Members(ctx)
		require.NoError(t, err)
		assert.Empty(t, members)
		m, err = b.Renew(ctx, driver.Renewal{Node: "b", TTL: ttl, Claimer: true, Record: member(false)})
		require.NoError(t, err)
		assert.Equal(t, []string{"b"}, liveNames(m))
	})
	t.Run("an expired membership and record are dropped by the store's clock, and that is a change", func(t *testing.T) {
		a := h.Open(t, 4)
		b := h.Same(t, a)
		_, err := a.Renew(ctx, driver.Renewal{Node: "a", TTL: 200 * time.Millisecond, Claimer: true, Record: member(false)})
		require.NoError(t, err)
		_, err = b.Renew(ctx, driver.Renewal{Node: "b", TTL: ttl, Claimer: true, Record: member(false)})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			members, err := b.Members(ctx)
			return err == nil && len(members) == 1 && members[0].Name == "b"
		}, waitFor, 20*time.Millisecond, "a's record expires")
		m, err := b.Renew(ctx, driver.Renewal{Node: "b", TTL: ttl, Claimer: true, Record: member(false)})
		require.NoError(t, err)
		assert.True(t, m.Changed, "finding a claimer expired is a change")
		assert.Equal(t, []string{"b"}, liveNames(m))
	})
}

func checkPeriodicRecords(t *testing.T, h Harness) {
	ctx := context.Background()
	const ttl = time.Minute
	t.Run("declarations live with their declaring node, and keep the last run recorded", func(t *testing.T) {
		d := h.Open(t, 4)
		next := time.UnixMicro(time.Now().Add(time.Hour).UnixMicro())
		decls := []driver.PeriodicDeclaration{{Name: "nightly", Trigger: "0 3 * * *", Next: next},
			{Name: "done", Trigger: "once"}}
		_, err := d.Renew(ctx, driver.Renewal{Node: "a", TTL: ttl, Claimer: true, Record: member(false), Periodic: decls})
		require.NoError(t, err)
		got, err := d.PeriodicDeclarations(ctx)
		require.NoError(t, err)
		slices.SortFunc(got, func(a, b driver.PeriodicDeclaration) int { return strings.Compare(a.Name, b.Name) })
		assert.Equal(t, []driver.PeriodicDeclaration{{Name: "done", Trigger: "once"},
			{Name: "nightly", Trigger: "0 3 * * *", Next: next}}, got)

		run := driver.PeriodicRun{Node: "a", Due: time.UnixMicro(next.UnixMicro() - 3600e6),
			Started: time.UnixMicro(next.UnixMicro() - 3599e6), Ended: time.UnixMicro(next.UnixMicro() - 3598e6),
			Outcome: driver.OutcomeFailed, Error: "boom"}
		require.NoError(t, d.RecordPeriodicRun(ctx, "nightly", run))
		got, err = d.PeriodicDeclarations(ctx)
		require.NoError(t, err)
		for _, p := range got {
			if p.Name == "nightly" {
				require.NotNil(t, p.LastRun)
				assert.Equal(t, run, *p.LastRun)
			} else {
				assert.Nil(t, p.LastRun)
			}
		}
	})
	t.Run("a run of an undeclared task is no error and declares nothing", func(t *testing.T) {
		d := h.Open(t, 4)
		require.NoError(t, d.RecordPeriodicRun(ctx, "ghost", driver.PeriodicRun{Node: "a", Due: time.UnixMicro(1),
			Outcome: driver.OutcomeSucceeded}))
		got, err := d.PeriodicDeclarations(ctx)
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("declarations expire with the membership", func(t *testing.T) {
		d := h.Open(t, 4)
		_, err := d.Renew(ctx, driver.Renewal{Node: "a", TTL: 200 * time.Millisecond, Claimer: true, Record: member(false),
			Periodic: []driver.PeriodicDeclaration{{Name: "p", Trigger: "t"}}})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := d.PeriodicDeclarations(ctx)
			return err == nil && len(got) == 0
		}, waitFor, 20*time.Millisecond)
	})
}

func checkCursors(t *testing.T, h Harness) {
	ctx := context.Background()
	t.Run("a cursor moves forward only and keeps the settings last written", func(t *testing.T) {
		d := h.Open(t, 8)
		got, err := d.Cursors(ctx, []string{"a", "b"})
		require.NoError(t, err)
		assert.Equal(t, []time.Time{{}, {}}, got, "no cursor yet")
		states, err := d.PeriodicStates(ctx, []string{"a"}, time.Now())
		require.NoError(t, err)
		assert.Equal(t, driver.PeriodicState{}, states["a"], "nothing stored")

		t1 := time.UnixMicro(time.Now().UnixMicro())
		t0, t2 := t1.Add(-time.Minute), t1.Add(time.Minute)
		require.NoError(t, d.WriteCursors(ctx, []driver.Cursor{{Name: "a", Stored: t1, Misfire: "skip", Overlap: true},
			{Name: "b", Stored: t2, Misfire: "each"}}))
		got, err = d.Cursors(ctx, []string{"a", "b", "c"})
		require.NoError(t, err)
		assert.Equal(t, []time.Time{t1, t2, {}}, got)

		require.NoError(t, d.WriteCursors(ctx, []driver.Cursor{{Name: "a", Stored: t0, Misfire: "coalesce"},
			{Name: "b", Misfire: "each", Overlap: true}}))
		got, err = h.Same(t, d).Cursors(ctx, []string{"a", "b"})
		require.NoError(t, err)
		assert.Equal(t, []time.Time{t1, t2}, got, "never back; a zero Stored moves nothing")
		states, err = d.PeriodicStates(ctx, []string{"a", "b"}, time.Now())
		require.NoError(t, err)
		assert.Equal(t, driver.PeriodicState{Found: true, Misfire: "coalesce"}, states["a"])
		assert.Equal(t, driver.PeriodicState{Found: true, Misfire: "each", Overlap: true}, states["b"])
	})
}

// noticeLog collects the notices of a subscription.
type noticeLog struct {
	ch     chan driver.Notice
	closed atomic.Bool // set once Close returned
	late   atomic.Int64
}

func newNoticeLog() *noticeLog { return &noticeLog{ch: make(chan driver.Notice, 1024)} }

func (l *noticeLog) on(n driver.Notice) {
	if l.closed.Load() {
		l.late.Add(1)
		return
	}
	select {
	case l.ch <- n:
	default:
	}
}

// await waits for a notice that match accepts.
func (l *noticeLog) await(t *testing.T, what string, match func(driver.Notice) bool) {
	t.Helper()
	timeout := time.After(waitFor)
	for {
		select {
		case n := <-l.ch:
			if match(n) {
				return
			}
		case <-timeout:
			t.Fatalf("no notice %s", what)
		}
	}
}

func checkNotices(t *testing.T, h Harness) {
	ctx := context.Background()
	t.Run("every subscription hears the membership notice", func(t *testing.T) {
		a := h.Open(t, 4)
		b := h.Same(t, a)
		la, lb := newNoticeLog(), newNoticeLog()
		sa, err := a.Subscribe(ctx, la.on)
		require.NoError(t, err)
		defer sa.Close()
		sb, err := b.Subscribe(ctx, lb.on)
		require.NoError(t, err)
		defer sb.Close()
		require.NoError(t, a.AnnounceMembership(ctx))
		isMembership := func(n driver.Notice) bool { return n.Kind == driver.NoticeMembership }
		la.await(t, "of membership on a", isMembership)
		lb.await(t, "of membership on b", isMembership)
	})
	t.Run("following a partition subscribes to it and hears its ended notices", func(t *testing.T) {
		a := h.Open(t, 4)
		name := "nightly"
		p := driver.PeriodicPartition(name, a.Partitions())
		l := newNoticeLog()
		s, err := h.Same(t, a).Subscribe(ctx, l.on)
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Follow(ctx, []int{p}))
		l.await(t, "of the subscription", func(n driver.Notice) bool { return n.Kind == driver.NoticeSubscribed })
		// The subscription's connection may confirm before the shard
		// routes to it: announce until the notice is heard.
		deadline := time.After(waitFor)
		for heard := false; !heard; {
			require.NoError(t, a.AnnounceEnded(ctx, name))
			select {
			case n := <-l.ch:
				heard = n.Kind == driver.NoticeEnded && n.TaskKind == "@"+name
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				t.Fatal("no notice of the ended run")
			}
		}
		require.NoError(t, s.Follow(ctx, nil), "following nothing")
		require.NoError(t, s.Follow(ctx, []int{0, 1, 2, 3}), "following every partition")
	})
	t.Run("no notice is heard once Close returned", func(t *testing.T) {
		a := h.Open(t, 4)
		l, witness := newNoticeLog(), newNoticeLog()
		s, err := a.Subscribe(ctx, l.on)
		require.NoError(t, err)
		w, err := a.Subscribe(ctx, witness.on)
		require.NoError(t, err)
		defer w.Close()
		require.NoError(t, s.Follow(ctx, []int{0, 1, 2, 3}))
		s.Close()
		l.closed.Store(true)
		require.NoError(t, a.AnnounceMembership(ctx))
		witness.await(t, "of membership on the witness", func(n driver.Notice) bool { return n.Kind == driver.NoticeMembership })
		assert.Zero(t, l.late.Load(), "notices after Close")
	})
}
