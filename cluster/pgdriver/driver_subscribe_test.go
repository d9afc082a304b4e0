package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// TestSubscriptionSurvivesALostConnection: when the server ends the
// subscription's connection, the driver says so (NoticeInterrupted with
// its error), listens again by itself on the membership channel and the
// partitions it follows, says that too (NoticeSubscribed: notices sent
// meanwhile are lost), and hears the next notices.
func TestSubscriptionSurvivesALostConnection(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	d := newConformanceDriver(t, pool, s.Partitions())
	notices := make(chan driver.Notice, 1024)
	sub, err := d.Subscribe(ctx, func(n driver.Notice) { notices <- n })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ids, _ := idsIn(s, 2, 1)
	if err := sub.Follow(ctx, []int{2}); err != nil {
		t.Fatal(err)
	}
	nextDriverNotice(t, notices, driver.NoticeSubscribed)
	var ended int
	if err := pool.QueryRow(ctx, `
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE application_name = 'stpe-listener' AND datname = current_database()`).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ended %d listener backends (%v), want 1", ended, err)
	}
	if n := nextDriverNotice(t, notices, driver.NoticeInterrupted); n.Err == nil {
		t.Fatal("NoticeInterrupted without its error")
	}
	nextDriverNotice(t, notices, driver.NoticeSubscribed)
	if err := d.AnnounceMembership(ctx); err != nil {
		t.Fatal(err)
	}
	nextDriverNotice(t, notices, driver.NoticeMembership)
	mustSchedule(t, s, dueTask(ids[0]))
	if n := nextDriverNotice(t, notices, driver.NoticePending); len(n.Tasks) != 1 || n.Tasks[0].ID != ids[0] {
		t.Fatalf("pending notice %+v, want %s", n, ids[0])
	}
}

// nextDriverNotice returns the next notice of kind, failing t if a notice
// of another kind or none comes within eventWait.
func nextDriverNotice(t *testing.T, notices <-chan driver.Notice, kind driver.NoticeKind) driver.Notice {
	t.Helper()
	select {
	case n := <-notices:
		if n.Kind != kind {
			t.Fatalf("notice %+v, want one of kind %d", n, kind)
		}
		return n
	case <-time.After(eventWait):
		t.Fatalf("no notice of kind %d within %v", kind, eventWait)
	}
	return driver.Notice{}
}
