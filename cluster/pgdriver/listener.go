package pgdriver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The listener: one connection of its own (outside the pool) LISTENs on
// the channels of a set of partitions and hands each notice to a
// callback; the cluster package's pub/sub subscription. Notices sent
// while it was disconnected are lost, as with Redis pub/sub, so after
// each (re)subscription it says so (EventSubscribed) and the caller
// sweeps. River's counterpart is its notifier on riverpgxv5's listener.

// EventKind tells the listener's events apart.
type EventKind int

const (
	// EventNotice: a task changed (Event.Notice).
	EventNotice EventKind = iota
	// EventSubscribed: the listener listens on Event.Partitions, after a
	// (re)connection or a change of the set; notices sent before may
	// have been missed, so the caller reloads those partitions.
	EventSubscribed
	// EventDisconnected: the connection failed (Event.Err); the listener
	// reconnects with backoff.
	EventDisconnected
)

// Event is what the listener hands to its callback.
type Event struct {
	Kind       EventKind
	Notice     Notice
	Partitions []int
	Err        error
}

// Notice is one message of a partition's channel.
type Notice struct {
	Partition int
	// State is the task's new state (pending or dead; a claim and a
	// completion are not told), or "removed" (canceled, whether deleted
	// or kept as a done record), or "resumed" (ID empty: the tasks of
	// Kind may be loaded again), or "ended" (ID empty: a run of an
	// occurrence of the periodic kind Kind ended), or "members" (the
	// membership channel's notice, Partition -1: the claimers changed).
	State string
	// RunAt is when the task is to run (not for removed and resumed).
	RunAt time.Time
	Kind  string
	ID    string
}

// channelPrefix starts each partition's channel name: stpe_p<partition>.
const channelPrefix = "stpe_p"

// membersChannel is the channel of the membership notices ("changed": the
// claimers changed), which every listener hears.
const membersChannel = "stpe_members"

// Channel is the notice channel of partition p.
func Channel(p int) string { return channelPrefix + strconv.Itoa(p) }

// parseNotice reads a notice of channel; ok is false for one it does
// not know.
func parseNotice(channel, payload string) (Notice, bool) {
	if channel == membersChannel {
		return Notice{Partition: -1, State: "members"}, true
	}
	p, err := strconv.Atoi(strings.TrimPrefix(channel, channelPrefix))
	if err != nil || !strings.HasPrefix(channel, channelPrefix) {
		return Notice{}, false
	}
	n := Notice{Partition: p}
	var ok bool
	n.State, payload, ok = strings.Cut(payload, " ")
	if !ok {
		return Notice{}, false
	}
	switch n.State {
	case "resumed", "ended":
		n.Kind = payload
		return n, payload != ""
	case "removed":
		n.Kind, n.ID, ok = strings.Cut(payload, " ")
		return n, ok
	case string(Pending), string(Running), string(Dead), string(Done):
		var at string
		at, payload, ok = strings.Cut(payload, " ")
		us, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil {
			return Notice{}, false
		}
		n.RunAt = time.UnixMicro(us)
		n.Kind, n.ID, ok = strings.Cut(payload, " ")
		return n, ok
	}
	return Notice{}, false
}

// Listener delivers the notices of a set of partitions. Make it with
// Store.Listen; Close stops it.
type Listener struct {
	store  *Store
	handle func(Event)
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned

	mu        sync.Mutex // guards want and interrupt
	want      []int      // the partitions to listen on, sorted
	interrupt context.CancelFunc
}

// Reconnection backoff bounds of the listener.
const (
	minReconnectWait = 10 * time.Millisecond
	maxReconnectWait = 2 * time.Second
)

// Listen starts a listener on the channels of partitions, which calls
// handle with each event, one at a time, from its own goroutine (handle
// should return quickly). The first event is EventSubscribed once it
// listens. It connects with the pool's configuration and reconnects
// after a failure until Close.
func (s *Store) Listen(partitions []int, handle func(Event)) (*Listener, error) {
	if handle == nil {
		return nil, invalid("listen", "nil handler")
	}
	if err := s.validPartitions("listen", partitions); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Listener{store: s, handle: handle, cancel: cancel, done: make(chan struct{}), want: sortedSet(partitions)}
	go l.run(ctx)
	return l, nil
}

// Set changes the partitions the listener listens on; an EventSubscribed
// follows once it does (none if the set is the same).
func (l *Listener) Set(partitions []int) error {
	if err := l.store.validPartitions("listen", partitions); err != nil {
		return err
	}
	l.mu.Lock()
	l.want = sortedSet(partitions)
	stop := l.interrupt
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	return nil
}

// Close stops the listener and waits until its goroutine and connection
// are gone; no event is delivered after it returns.
func (l *Listener) Close() {
	l.cancel()
	<-l.done
}

// run connects, listens and waits for notices until ctx ends.
func (l *Listener) run(ctx context.Context) {
	defer close(l.done)
	wait := minReconnectWait
	for ctx.Err() == nil {
		err := l.session(ctx, func() { wait = minReconnectWait })
		if ctx.Err() != nil {
			return
		}
		l.handle(Event{Kind: EventDisconnected, Err: err})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, maxReconnectWait)
	}
}

// session is one connection's life: it listens on the wanted channels,
// then delivers notices, applying each change of the set, until the
// connection fails or ctx ends. subscribed is called after each LISTEN
// round that succeeded.
func (l *Listener) session(ctx context.Context, subscribed func()) error {
	cfg := l.store.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "stpe-listener"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cluster: listen: connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	var have []int
	for {
		l.mu.Lock()
		want := l.want
		waitCtx, interrupt := context.WithCancel(ctx)
		l.interrupt = interrupt
		l.mu.Unlock()
		if have == nil || !slices.Equal(have, want) {
			if err := relisten(ctx, conn, have, want); err != nil {
				interrupt()
				return err
			}
			have = want
			subscribed()
			l.handle(Event{Kind: EventSubscribed, Partitions: slices.Clone(want)})
		}
		n, err := conn.WaitForNotification(waitCtx)
		interrupt()
		if n != nil {
			if notice, ok := parseNotice(n.Channel, n.Payload); ok {
				l.handle(Event{Kind: EventNotice, Notice: notice})
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if waitCtx.Err() != nil && !conn.IsClosed() {
				continue // Set interrupted the wait: apply the new set
			}
			return fmt.Errorf("cluster: listen: %w", err)
		}
	}
}

// relisten makes conn listen on the membership channel and the channels
// of want and no others, after it listened on those of have, in one round
// trip.
func relisten(ctx context.Context, conn *pgx.Conn, have, want []int) error {
	var b strings.Builder
	if have != nil {
		b.WriteString("UNLISTEN *;")
	}
	b.WriteString("LISTEN " + membersChannel + ";")
	for _, p := range want {
		b.WriteString("LISTEN " + Channel(p) + ";")
	}
	if err := conn.PgConn().Exec(ctx, b.String()).Close(); err != nil {
		return fmt.Errorf("cluster: listen: %w", err)
	}
	return nil
}

// sortedSet is parts sorted without repeats, empty (not nil) for none.
func sortedSet(parts []int) []int {
	out := slices.Clone(parts)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []int{}
	}
	return out
}
