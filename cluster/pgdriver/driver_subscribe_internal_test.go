package pgdriver

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// TestNoticeOfMapsEachPayload: every payload the statements send, and the
// listener's own events, become the driver's notices; a task made dead is
// told to no node (as the Redis driver publishes nothing for it), so that
// none offers it to its window as pending.
func TestNoticeOfMapsEachPayload(t *testing.T) {
	lost := errors.New("connection lost")
	due := time.UnixMicro(1700000000000001)
	cases := []struct {
		channel, payload string
		want             driver.Notice
	}{
		{"stpe_p3", "pending 1700000000000001 mail a b", driver.Notice{Kind: driver.NoticePending,
			Tasks: []driver.NoticedTask{{ID: "a b", Kind: "mail", Due: due}}}},
		{"stpe_p3", "removed mail x", driver.Notice{Kind: driver.NoticeCanceled, ID: "x"}},
		{"stpe_p3", "resumed mail", driver.Notice{Kind: driver.NoticeResumed, TaskKind: "mail"}},
		{"stpe_p3", "ended @nightly", driver.Notice{Kind: driver.NoticeEnded, TaskKind: "@nightly"}},
		{membersChannel, "changed", driver.Notice{Kind: driver.NoticeMembership}},
	}
	for _, c := range cases {
		n, ok := parseNotice(c.channel, c.payload)
		if !ok {
			t.Fatalf("parseNotice(%q, %q) refused", c.channel, c.payload)
		}
		got, ok := noticeOf(Event{Kind: EventNotice, Notice: n})
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("notice of %q = %+v, %v; want %+v", c.payload, got, ok, c.want)
		}
	}
	n, _ := parseNotice("stpe_p3", "dead 1700000000000001 mail x")
	if got, ok := noticeOf(Event{Kind: EventNotice, Notice: n}); ok {
		t.Errorf("a dead task is told as %+v, want nothing", got)
	}
	if got, _ := noticeOf(Event{Kind: EventSubscribed}); got.Kind != driver.NoticeSubscribed {
		t.Errorf("a subscription is told as %+v", got)
	}
	if got, _ := noticeOf(Event{Kind: EventDisconnected, Err: lost}); got.Kind != driver.NoticeInterrupted || got.Err != lost {
		t.Errorf("a lost connection is told as %+v", got)
	}
}
