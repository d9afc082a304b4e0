package cluster

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler"
)

// The window: each node keeps in its scheduler.Scheduler the tasks of the
// partitions it owns for their kind (ownership.go) that fall due within
// the next WithWindow, and tries to claim each at its due time. It learns
// of them three ways: its own Schedule calls, the owned partitions'
// pub/sub channels (tasks scheduled, retried, handed back or reaped
// anywhere), and a sweep of the owned partitions' pending tasks every
// WithSweepInterval, at start, after every (re)subscription and after its
// share moved: the safety net for a lost message.
//
// n.mu is never held across a call into the Scheduler, Redis or a handler:
// the window decides under the lock, calls outside it, and checks under the
// lock again that its entry is still the current one.

// offer puts a pending task into the window if it falls due within it, this
// node owns its partition for its kind and the node is running; the node
// tries to claim it when its clock, corrected by its measured offset from
// Redis's, reaches due. A task already there for the same due time is
// left alone; for another due time it is moved.
func (n *Node) offer(id, kind string, due int64) {
	n.mu.Lock()
	owned := n.shares.owns(kind, partitionIndex(id, n.drv.Partitions()))
	n.mu.Unlock()
	if owned {
		n.enter(id, kind, due, -1, false)
	}
}

// enter puts a task into the window, to be claimed after wait, or, for a
// negative wait, when the node's corrected clock reaches due. backup marks
// an overdue task of a partition this node backs up (standby.go): it
// waits behind the node's own tasks, and is not put in again while there.
func (n *Node) enter(id, kind string, due int64, wait time.Duration, backup bool) {
	n.mu.Lock()
	if n.state != stateStarted {
		n.mu.Unlock()
		return
	}
	if _, ok := n.handlers[kind]; !ok {
		n.mu.Unlock()
		return
	}
	if n.claiming[id] || n.running[id] != nil {
		// This node is claiming the task or holds the claim: a
		// message or a sweep that saw it pending before the claim is
		// stale. Put back, it would wait, counted as waiting, for a
		// second claim, which fails, or which wins after this node's
		// Stop has handed the task back, and hands it back again.
		n.mu.Unlock()
		return
	}
	now := n.nowLocked()
	if due > now.Add(n.cfg.window).UnixMicro() {
		n.mu.Unlock()
		return
	}
	old := n.loaded[id]
	if old != nil && old.due == due && (wait < 0 || backup && old.backup) {
		n.mu.Unlock()
		return
	}
	var oldFut scheduler.ScheduledFuture
	if old != nil {
		oldFut = old.fut
		n.unreadyLocked(old)
	}
	e := &entry{id: id, kind: kind, due: due, index: -1, backup: backup}
	n.loaded[id] = e
	if wait < 0 {
		wait = time.UnixMicro(due).Sub(now)
	}
	n.mu.Unlock()

	if oldFut != nil {
		// Not yet scheduled (nil): its own enter cancels it.
		oldFut.Cancel(false)
	}
	fut, err := n.sched.Schedule(func(context.Context) error {
		n.fire(id, e)
		return nil
	}, wait)

	n.mu.Lock()
	current := n.loaded[id] == e
	if current {
		if err != nil {
			// The scheduler is shut down: the node is stopping,
			// and the task stays pending in Redis.
			delete(n.loaded, id)
		} else {
			e.fut = fut
		}
	}
	n.mu.Unlock()
	if !current && err == nil {
		// Moved, claimed elsewhere or canceled meanwhile.
		fut.Cancel(false)
	}
}

// unload removes a task from the window: another node claimed it, or it
// was canceled.
func (n *Node) unload(id string) {
	var fut scheduler.ScheduledFuture
	n.mu.Lock()
	if e := n.loaded[id]; e != nil {
		fut = e.fut
		n.unreadyLocked(e)
		delete(n.loaded, id)
	}
	n.mu.Unlock()
	if fut != nil {
		fut.Cancel(false)
	}
}

// fire runs on a worker of the scheduler when entry e of task id falls
// due: it moves e into its kind's ready queue and claims and runs ready
// tasks while a worker is free (concurrency.go).
func (n *Node) fire(id string, e *entry) {
	n.mu.Lock()
	if n.loaded[id] != e || n.state != stateStarted {
		n.mu.Unlock()
		return
	}
	n.readyLocked(e)
	n.mu.Unlock()
	n.dispatch()
}

// requestSweep asks the sweep loop for a sweep now, without waiting.
func (n *Node) requestSweep() { kickNow(n.kick) }

// sweepLoop reloads the window every sweep interval and on request.
func (n *Node) sweepLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.sweep, n.kick, func() { n.sweep(ctx) })
}

// sweep creates the periodic occurrences due within the window and loads
// the pending tasks due within it of the partitions and kinds this node
// owns.
func (n *Node) sweep(ctx context.Context) {
	n.createOccurrences(ctx)
	n.mu.Lock()
	until := n.nowLocked().Add(n.cfg.window)
	owned := n.shares.owned
	n.mu.Unlock()
	tasks, full, err := n.drv.LoadDue(ctx, owned, until, false, n.cfg.loadLimit)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: sweep: failed", "err", err)
			n.followFailover(err)
		}
		return
	}
	for _, t := range tasks {
		n.offer(t.ID, t.Kind, t.Due.UnixMicro())
	}
	n.warnUnhandled(ctx)
	if full {
		n.mu.Lock()
		n.more = true
		n.mu.Unlock()
	}
}

// pendingTask is one pending task as a message of the partition's
// channel tells it (pubsub.go).
type pendingTask struct {
	id, kind string
	due      int64
}
