package cluster

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The store's pub/sub channels: one per partition (partition.channel),
// to which a node subscribes while it owns the partition for some kind,
// and prefix:membership, to which every started node subscribes. This is
// the one place their messages are written (the Lua functions below,
// which the scripts include, and announceMembership) and read
// (parseEvent, parseMany). Six messages on a partition's channel:
//
//   - "<due> <kind> <id>": the task became pending, to run at due (µs);
//     the ID comes last, so it may hold spaces;
//   - "many <due> <kind> <length> <id> ...": tasks stored together
//     (ScheduleMany) became pending; each ID is preceded by its length in
//     bytes, so it may hold spaces, and followed by a space but the last;
//   - "claimed <id>": a node won the claim, the others drop it;
//   - "canceled <id>": Cancel removed it; a node running it cancels the
//     run's ctx at once;
//   - "resumed <kind>": Resume made the kind's tasks claimable again;
//     every node sweeps at once;
//   - "ended <kind>": a run of an occurrence of the periodic task whose
//     occurrences are of kind ended (publishEnded, on the channel of the
//     task's partition); a node with an occurrence of it waiting for that
//     run (misfire.go) tries to claim it again at once.
//
// and one on the membership channel, "changed": a node joined or left the
// claimers, or found one expired; every node renews its membership at
// once and so recomputes its share.
//
// A message is a hint: one lost while a subscription was down is made up
// by the sweep that every (re)subscription asks for, and the heartbeat
// finds a canceled run within a quarter lease.

// publishEnded tells the nodes that a run of an occurrence of periodic
// task name (of kind) ended.
func (s store) publishEnded(ctx context.Context, name, kind string) error {
	return s.rdb.SPublish(ctx, s.parts[periodicPartition(name, len(s.parts))].Channel(), "ended "+kind).Err()
}

// membershipChannel is the name of the membership channel.
func (s store) membershipChannel() string { return s.keys().MembershipChannel() }

// announceMembership tells every node that the claimers changed.
func (n *Node) announceMembership(ctx context.Context) {
	if err := n.st.rdb.Publish(ctx, n.st.membershipChannel(), "changed").Err(); err != nil && ctx.Err() == nil {
		n.cfg.logger.Warn("cluster: membership: announce failed", "err", err)
	}
}

// subscribe makes the node's sharded subscriptions cover exactly the
// partitions' channels in want. A partition's channel is sharded
// (SSUBSCRIBE, SPUBLISH in the scripts): its messages stay on the shard
// that holds the partition, where a plain PUBLISH would be forwarded to
// every server of a Redis Cluster. On a Redis Cluster a sharded
// subscription is to the master of its channel's slot, so each channel has
// a subscription (a connection) of its own, which follows a failover of
// that slot when it reconnects; on one server, one subscription carries
// them all. Each subscription has its listening loop.
func (n *Node) subscribe(ctx context.Context, want map[string]bool) error {
	n.subMu.Lock()
	defer n.subMu.Unlock()
	if n.loops == nil {
		return nil // not started, or stopped
	}
	var add, drop []string
	for c := range want {
		if _, ok := n.shards[c]; !ok {
			add = append(add, c)
		}
	}
	for c := range n.shards {
		if !want[c] {
			drop = append(drop, c)
		}
	}
	if cc, ok := n.rdb.(*redis.ClusterClient); ok {
		for _, c := range drop {
			n.shards[c].stop()
			delete(n.shards, c)
		}
		for _, c := range add {
			ps := cc.SSubscribe(ctx, c)
			lctx, stop := context.WithCancel(n.loops)
			n.bg.Add(1)
			go n.listenLoop(lctx, ps)
			n.shards[c] = shardSub{ps: ps, stop: stop}
		}
		return nil
	}
	if n.shared == nil {
		n.shared = n.rdb.SSubscribe(ctx)
		n.bg.Add(1)
		go n.listenLoop(n.loops, n.shared)
	}
	if len(drop) > 0 {
		if err := n.shared.SUnsubscribe(ctx, drop...); err != nil {
			return err
		}
		for _, c := range drop {
			delete(n.shards, c)
		}
	}
	if len(add) > 0 {
		if err := n.shared.SSubscribe(ctx, add...); err != nil {
			return err
		}
		for _, c := range add {
			n.shards[c] = shardSub{ps: n.shared, stop: func() {}}
		}
	}
	return nil
}

// shardSub is the sharded subscription that carries one partition's
// channel, and what ends its listening loop (nothing for a subscription
// shared by every channel).
type shardSub struct {
	ps   *redis.PubSub
	stop context.CancelFunc
}

// sharesMoved follows a change of this node's share: it subscribes to the
// channels of the partitions it now owns (and drops the others), unloads
// the tasks it no longer owns (but those it claims as a backup, which the
// standby's next look, asked for here, sorts out), and sweeps the ones it
// now owns.
func (n *Node) sharesMoved(ctx context.Context) {
	n.mu.Lock()
	want := n.shares.channels(n.st.parts)
	var drop []string
	for id, e := range n.loaded {
		if !e.backup && !n.shares.owns(e.kind, n.st.partOf(id).Index) {
			drop = append(drop, id)
		}
	}
	n.mu.Unlock()
	if err := n.subscribe(ctx, want); err != nil && ctx.Err() == nil {
		n.cfg.logger.Warn("cluster: pub/sub: subscribe failed", "err", err)
	}
	for _, id := range drop {
		n.unload(id)
	}
	n.requestSweep()
	kickNow(n.standbyKick)
}

// kickNow asks the loop that reads kick to run now, without waiting.
func kickNow(kick chan struct{}) {
	select {
	case kick <- struct{}{}:
	default:
	}
}

// eventKind tells the messages apart.
type eventKind int

const (
	eventPending eventKind = iota
	eventClaimed
	eventCanceled
	eventResumed
	eventEnded
)

// event is one message of the channel.
type event struct {
	kind     eventKind
	id       string
	taskKind string // eventPending, eventResumed and eventEnded only
	due      int64  // eventPending only
}

// parseEvent reads a message; ok is false for one it does not know.
func parseEvent(payload string) (e event, ok bool) {
	if id, found := strings.CutPrefix(payload, "claimed "); found {
		return event{kind: eventClaimed, id: id}, true
	}
	if id, found := strings.CutPrefix(payload, "canceled "); found {
		return event{kind: eventCanceled, id: id}, true
	}
	if kind, found := strings.CutPrefix(payload, "resumed "); found {
		return event{kind: eventResumed, taskKind: kind}, true
	}
	if kind, found := strings.CutPrefix(payload, "ended "); found {
		return event{kind: eventEnded, taskKind: kind}, true
	}
	parts := strings.SplitN(payload, " ", 3)
	if len(parts) != 3 {
		return event{}, false
	}
	due, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return event{}, false
	}
	return event{kind: eventPending, due: due, taskKind: parts[1], id: parts[2]}, true
}

// parseMany reads a "many" message; ok is false for another message, or
// one malformed.
func parseMany(payload string) (tasks []pendingTask, ok bool) {
	rest, found := strings.CutPrefix(payload, "many ")
	if !found {
		return nil, false
	}
	for rest != "" {
		f := strings.SplitN(rest, " ", 4)
		if len(f) != 4 {
			return nil, false
		}
		due, err1 := strconv.ParseInt(f[0], 10, 64)
		size, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || size < 0 || size > len(f[3]) {
			return nil, false
		}
		tasks = append(tasks, pendingTask{id: f[3][:size], kind: f[1], due: due})
		rest = f[3][size:]
		if rest != "" {
			if rest, found = strings.CutPrefix(rest, " "); !found || rest == "" {
				return nil, false
			}
		}
	}
	return tasks, len(tasks) > 0
}

// listenLoop reads the store's channel; each (re)subscription asks for a
// sweep, since messages published while the connection was down are lost.
func (n *Node) listenLoop(ctx context.Context, ps *redis.PubSub) {
	defer n.bg.Done()
	// Receive does not return when ctx ends; closing the subscription
	// makes it.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	defer ps.Close()
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.cfg.logger.Warn("cluster: pub/sub: receive failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			n.requestSweep()
		case *redis.Message:
			if m.Channel == n.st.membershipChannel() {
				kickNow(n.renewKick)
				continue
			}
			if tasks, ok := parseMany(m.Payload); ok {
				for _, t := range tasks {
					n.offer(t.id, t.kind, t.due)
				}
				continue
			}
			e, ok := parseEvent(m.Payload)
			if !ok {
				continue
			}
			switch e.kind {
			case eventPending:
				n.offer(e.id, e.taskKind, e.due)
			case eventClaimed:
				n.unload(e.id)
			case eventCanceled:
				n.unload(e.id)
				n.cancelRun(e.id)
			case eventResumed:
				n.requestSweep()
			case eventEnded:
				n.wakeBlocked(e.taskKind)
			}
		}
	}
}
