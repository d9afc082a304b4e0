package cluster

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The store's pub/sub channel, prefix:events: the one place its messages
// are written (the Lua functions below, which the scripts include) and
// read (parseEvent). Four messages:
//
//   - "<due> <kind> <id>": the task became pending, to run at due (µs);
//     the ID comes last, so it may hold spaces;
//   - "claimed <id>": a node won the claim, the others drop it;
//   - "canceled <id>": Cancel removed it; a node running it cancels the
//     run's ctx at once;
//   - "resumed <kind>": Resume made the kind's tasks claimable again;
//     every node sweeps at once.
//
// A message is a hint: one lost while a subscription was down is made up
// by the sweep that every (re)subscription asks for, and the heartbeat
// finds a canceled run within a quarter lease.

// channel is the name of the store's pub/sub channel.
func (s store) channel() string { return s.prefix + ":events" }

// luaPublish defines the functions the scripts publish with; ARGV of every
// script that includes it names the channel where it says so.
const luaPublish = `
local function publish_pending(channel, due, kind, id)
  redis.call('PUBLISH', channel, due .. ' ' .. kind .. ' ' .. id)
end
local function publish_claimed(channel, id)
  redis.call('PUBLISH', channel, 'claimed ' .. id)
end
local function publish_canceled(channel, id)
  redis.call('PUBLISH', channel, 'canceled ' .. id)
end
`

// eventKind tells the messages apart.
type eventKind int

const (
	eventPending eventKind = iota
	eventClaimed
	eventCanceled
	eventResumed
)

// event is one message of the channel.
type event struct {
	kind     eventKind
	id       string
	taskKind string // eventPending and eventResumed only
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
			}
		}
	}
}
