package cluster

import (
	"container/heap"
	"context"
	"time"
)

// Workers and per-kind limits. A task of the window that falls due is not
// claimed at once: it joins its kind's ready queue, and the node claims
// from the ready queues only while one of its WithConcurrency workers is
// free, and for a kind only while fewer than its WithKindConcurrency runs
// are going on. Which kind gets a free worker when several wait is the
// priority rule (priority.go). A task left waiting is never dropped: it
// stays pending in Redis and in the window, and, unless this node claims
// it first, a node with a free worker claims it after WithBackupDelay,
// which drops it from this node's window.
//
// The scheduler that fires the window has one worker more than the
// concurrency. At most WithConcurrency of them claim and run tasks, so one
// is always free to move a task that falls due into its ready queue: a
// busy node still sees every due task, and a kind at its limit holds up
// nobody.

// KindOption is the option WithKindConcurrency and WithKindPriority return:
// a HandleOption for Node.Handle, Node.Periodic and HandleJSON.
type KindOption struct{ apply func(*handleConfig) }

func (o KindOption) applyHandle(h *handleConfig) { o.apply(h) }

// WithKindConcurrency limits the runs of one kind at once on this node to
// n (default: no limit but the node's WithConcurrency): asynq and River
// limit a queue per process the same way (asynq's Config.Queues with a
// queue per kind, River's QueueConfig.MaxWorkers). A task of a kind at its
// limit is not claimed by this node: it waits, pending, until one of the
// kind's runs ends here or a node with room claims it (after
// WithBackupDelay at most, if another node handles the kind and has a free
// worker). It holds up no other kind. An n below 1 is an error wrapping
// scheduler.ErrInvalidArgument.
func WithKindConcurrency(n int) KindOption {
	return KindOption{func(h *handleConfig) { h.limit, h.limitSet = n, true }}
}

// readyQueue is one kind's entries that are due and wait for a free
// worker: a min-heap by due time, then ID, the node's own tasks before
// those it claims as a backup (standby.go). Each entry's index is its place
// in the heap, so that an entry leaving the window leaves its queue at
// once.
type readyQueue []*entry

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.backup != b.backup {
		return !a.backup
	}
	if a.backup {
		// A backup works from the other end of the owner's order, so
		// that the two meet once, not at every task.
		a, b = b, a
	}
	if a.due != b.due {
		return a.due < b.due
	}
	return a.id < b.id
}
func (q readyQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *readyQueue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *readyQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	e.index = -1
	return e
}

// readyLocked moves e, due now, into its kind's ready queue. n.mu must be
// held.
func (n *Node) readyLocked(e *entry) {
	q := n.ready[e.kind]
	if q == nil {
		q = &readyQueue{}
		n.ready[e.kind] = q
	}
	e.ready = true
	heap.Push(q, e)
}

// unreadyLocked takes e out of its ready queue, if it is in one: it left
// the window (claimed elsewhere, canceled, moved). n.mu must be held.
func (n *Node) unreadyLocked(e *entry) {
	if e == nil || !e.ready {
		return
	}
	e.ready = false
	q := n.ready[e.kind]
	if q != nil && e.index >= 0 && e.index < q.Len() && (*q)[e.index] == e {
		heap.Remove(q, e.index)
		if q.Len() == 0 {
			delete(n.ready, e.kind)
		}
	}
}

// dispatch claims and runs ready tasks on the calling worker, one after
// the other, while a worker is free and a kind below its limit has one;
// it returns when none is left to take or the node is stopping.
func (n *Node) dispatch() {
	for {
		n.mu.Lock()
		if n.state != stateStarted || n.busy >= n.cfg.concurrency {
			n.mu.Unlock()
			return
		}
		e := n.pickLocked()
		if e == nil {
			n.mu.Unlock()
			return
		}
		e.ready = false
		delete(n.loaded, e.id)
		n.claiming[e.id] = true
		n.busy++
		n.kindBusy[e.kind]++
		refill := n.more && len(n.loaded) < n.cfg.loadLimit/2
		if refill {
			n.more = false
		}
		n.mu.Unlock()
		if refill {
			n.requestSweep()
		}

		n.claimAndRun(e)

		n.mu.Lock()
		n.busy--
		if n.kindBusy[e.kind]--; n.kindBusy[e.kind] <= 0 {
			delete(n.kindBusy, e.kind)
		}
		n.mu.Unlock()
	}
}

// pickLocked takes from the ready queues the entry to claim next, by the
// priority rule among the kinds below their limit, or returns nil. n.mu
// must be held.
func (n *Node) pickLocked() *entry {
	kinds := n.pickable[:0]
	defer func() { n.pickable = kinds[:0] }()
	for kind := range n.ready {
		if limit := n.handlers[kind].limit; limit > 0 && n.kindBusy[kind] >= limit {
			continue
		}
		kinds = append(kinds, kind)
	}
	if len(kinds) == 0 {
		return nil
	}
	kind := n.chooseKindLocked(kinds)
	q := n.ready[kind]
	e := heap.Pop(q).(*entry)
	if q.Len() == 0 {
		delete(n.ready, kind)
	}
	return e
}

// claimAndRun claims the task of entry e and, if this node won it, runs
// it.
func (n *Node) claimAndRun(e *entry) {
	id := e.id
	token := n.newToken()
	sent := time.Now()
	sentClock := n.cfg.clock.Now()
	res, err := bounded(n, n.cfg.lease/3, func(ctx context.Context) (claimResult, error) {
		return n.claimTask(ctx, e, token)
	})
	if err != nil || res.outcome != claimWon {
		// A won claim stays claiming until run holds it.
		n.mu.Lock()
		n.endClaimLocked(id)
		n.mu.Unlock()
	}
	switch {
	case err != nil:
		// Redis is unreachable or slow: the claim may even have
		// succeeded. Either way the task is safe in Redis (pending,
		// or leased and reaped when the lease expires); the sweep
		// loads it again.
		n.cfg.logger.Warn("cluster: claim: failed", "id", id, "err", err)
		n.followFailover(err)
		n.requestSweep()
	case res.outcome == claimLater:
		// Retried or rescheduled since it was loaded.
		n.offer(id, res.kind, res.due)
	case res.outcome == claimEarly:
		// Due, by this node's clock, but not yet by Redis's: its
		// offset from Redis's clock was off; read it again from the
		// reply, and try again when Redis's clock gets there.
		got := n.cfg.clock.Now()
		n.mu.Lock()
		n.offset = n.offsetEst.add(sentClock, got, res.storeNow)
		n.mu.Unlock()
		n.enter(id, res.kind, res.due, time.Duration(res.due-res.storeNow)*time.Microsecond, e.backup)
	case res.outcome == claimSkipped:
		n.cfg.logger.Info("cluster: periodic: occurrence skipped by its misfire policy", "id", id)
	case res.outcome == claimBlocked:
		// A periodic occurrence that waits for another (misfire.go).
		n.enter(id, e.kind, e.due, res.wait, e.backup)
	case res.outcome == claimWon:
		n.observeClaim(res.kind, e.due)
		n.run(id, token, sent, res)
	}
}
