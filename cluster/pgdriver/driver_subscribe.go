package pgdriver

import (
	"context"
	"sync"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Subscribe subscribes to the notices by LISTEN on a connection of its own
// (the Listener): the membership channel at once, the partitions' channels
// as Follow sets them. It returns once the database confirmed the first
// LISTEN, or the error of the first connection. on is called with each
// notice from the listener's goroutine, one at a time. After a lost
// connection the listener connects and listens again by itself; each
// (re)subscription but the first is a NoticeSubscribed, since notices sent
// meanwhile are lost, and each failure a NoticeInterrupted. River's
// producers hear their queue's notices so (riverpgxv5's listener).
func (d *Driver) Subscribe(ctx context.Context, on func(driver.Notice)) (driver.Subscription, error) {
	if on == nil {
		return nil, invalid("subscribe", "nil callback")
	}
	first := make(chan error, 1)
	s := &subscription{on: on}
	l, err := d.st.Listen(nil, func(e Event) {
		s.mu.Lock()
		confirmed := s.confirmed
		s.confirmed = true
		s.mu.Unlock()
		if !confirmed {
			if e.Kind == EventDisconnected {
				first <- e.Err
			} else {
				first <- nil
			}
			return
		}
		if n, ok := noticeOf(e); ok {
			on(n)
		}
	})
	if err != nil {
		return nil, err
	}
	select {
	case err = <-first:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		l.Close()
		return nil, failed("subscribe", err)
	}
	s.l = l
	return s, nil
}

// AnnounceMembership sends the membership notice to every subscribed node.
func (d *Driver) AnnounceMembership(ctx context.Context) error {
	if _, err := d.st.pool.Exec(ctx, `SELECT pg_notify($1, 'changed')`, membersChannel); err != nil {
		return failed("announce membership", err)
	}
	return nil
}

// AnnounceEnded sends NoticeEnded of the occurrences' kind of periodic
// task name on its partition's channel (driver.PeriodicPartition).
func (d *Driver) AnnounceEnded(ctx context.Context, name string) error {
	ch := Channel(driver.PeriodicPartition(name, d.Partitions()))
	if _, err := d.st.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, ch, "ended @"+name); err != nil {
		return failed("announce the end of a run of "+name, err)
	}
	return nil
}

// subscription is a driver.Subscription on a Listener.
type subscription struct {
	on func(driver.Notice)
	l  *Listener

	mu        sync.Mutex // guards confirmed
	confirmed bool       // the first event, which Subscribe waits for, was seen
}

// Follow makes the subscription listen on the channels of exactly parts,
// besides the membership channel; a NoticeSubscribed follows once it does.
func (s *subscription) Follow(ctx context.Context, parts []int) error {
	if parts == nil {
		parts = []int{}
	}
	return s.l.Set(parts)
}

// Close ends the subscription; it returns once no call of on runs or will
// start.
func (s *subscription) Close() { s.l.Close() }

// noticeOf is the driver's notice of a listener's event; ok is false for
// one nodes need not hear (a task that became dead).
func noticeOf(e Event) (driver.Notice, bool) {
	switch e.Kind {
	case EventSubscribed:
		return driver.Notice{Kind: driver.NoticeSubscribed}, true
	case EventDisconnected:
		return driver.Notice{Kind: driver.NoticeInterrupted, Err: e.Err}, true
	}
	n := e.Notice
	switch n.State {
	case "members":
		return driver.Notice{Kind: driver.NoticeMembership}, true
	case "resumed":
		return driver.Notice{Kind: driver.NoticeResumed, TaskKind: n.Kind}, true
	case "ended":
		return driver.Notice{Kind: driver.NoticeEnded, TaskKind: n.Kind}, true
	case "removed":
		return driver.Notice{Kind: driver.NoticeCanceled, ID: n.ID}, true
	case string(Pending):
		return driver.Notice{Kind: driver.NoticePending,
			Tasks: []driver.NoticedTask{{ID: n.ID, Kind: n.Kind, Due: n.RunAt}}}, true
	}
	return driver.Notice{}, false
}
