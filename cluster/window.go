package cluster

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The window: each node keeps in its scheduler.Scheduler the tasks that fall
// due within the next WithWindow, and claims each at its due time. It learns
// of them three ways: its own Schedule calls, the store's pub/sub channel
// (tasks scheduled, retried, handed back or reaped anywhere), and a sweep of
// the pending set every WithSweepInterval, at start and after every
// (re)subscription: the safety net for a lost message.

// offer puts a pending task into the window if it falls due within it, this
// node handles its kind and the node is running. A task already there for
// the same due time is left alone; for another due time it is moved.
func (n *Node) offer(id, kind string, due int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != stateStarted {
		return
	}
	if _, ok := n.handlers[kind]; !ok {
		return
	}
	now := n.cfg.clock.Now()
	if due > now.Add(n.cfg.window).UnixMicro() {
		return
	}
	if e := n.loaded[id]; e != nil {
		if e.due == due {
			return
		}
		e.fut.Cancel(false)
	}
	delay := time.UnixMicro(due).Sub(now)
	if !n.preferredLocked(id) {
		delay += n.cfg.backupDelay
	}
	fut, err := n.sched.Schedule(func(context.Context) error {
		n.fire(id, due)
		return nil
	}, delay)
	if err != nil {
		// The scheduler is shut down: the node is stopping, and the
		// task stays pending in Redis.
		delete(n.loaded, id)
		return
	}
	n.loaded[id] = &entry{due: due, fut: fut}
}

// fire runs on a worker of the scheduler at a task's due time: it claims
// the task and, if this node won it, runs it.
func (n *Node) fire(id string, due int64) {
	n.mu.Lock()
	e := n.loaded[id]
	if e == nil || e.due != due {
		n.mu.Unlock()
		return
	}
	delete(n.loaded, id)
	if n.more && len(n.loaded) < n.cfg.loadLimit/2 {
		n.more = false
		n.requestSweep()
	}
	if n.state != stateStarted {
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()

	token := n.newToken()
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.lease)
	out, c, err := n.st.claim(ctx, id, due, n.cfg.lease, token)
	cancel()
	switch {
	case err != nil:
		// Redis is unreachable or slow: the claim may even have
		// succeeded. Either way the task is safe in Redis (pending,
		// or leased and reaped when the lease expires); the sweep
		// loads it again.
		n.cfg.logger.Warn("cluster: claim failed", "id", id, "err", err)
		n.requestSweep()
	case out == claimLater:
		// Retried or rescheduled since it was loaded.
		n.offer(id, c.kind, c.due)
	case out == claimWon:
		n.run(id, token, c)
	}
}

// requestSweep asks the sweep loop for a sweep now, without waiting.
func (n *Node) requestSweep() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// sweepLoop reloads the window every sweep interval and on request.
func (n *Node) sweepLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.sweep, n.kick, func() { n.sweep(ctx) })
}

// sweep creates the periodic occurrences due within the window and loads
// every pending task due within it.
func (n *Node) sweep(ctx context.Context) {
	n.createOccurrences(ctx)
	until := n.cfg.clock.Now().Add(n.cfg.window).UnixMicro()
	tasks, err := n.st.load(ctx, until, n.cfg.loadLimit)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: sweep failed", "err", err)
		}
		return
	}
	for _, t := range tasks {
		n.offer(t.id, t.kind, t.due)
	}
	if len(tasks) == n.cfg.loadLimit {
		n.mu.Lock()
		n.more = true
		n.mu.Unlock()
	}
}

// listenLoop reads the store's channel: each message is a task that became
// pending; each (re)subscription asks for a sweep, since messages published
// while the connection was down are lost.
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
			n.cfg.logger.Warn("cluster: pub/sub receive failed", "err", err)
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
			if id, ok := strings.CutPrefix(m.Payload, "claimed "); ok {
				n.dropClaimed(id)
				continue
			}
			// "due kind id": the ID comes last, so it may hold spaces.
			parts := strings.SplitN(m.Payload, " ", 3)
			if len(parts) != 3 {
				continue
			}
			due, err := strconv.ParseInt(parts[0], 10, 64)
			if err != nil {
				continue
			}
			n.offer(parts[2], parts[1], due)
		}
	}
}
