package cluster

import (
	"context"
	"time"
)

// The standby: a node backs up the owners of some partitions for its kinds
// (ownership.go). It loads none of their tasks; it looks, every
// WithBackupDelay, for tasks of those partitions that are overdue by more
// than WithBackupDelay, newest first, at most standbyBatch per partition
// and kind, and claims them at once: the tasks of an owner that is busy
// (no free worker), stalled, or dead and not yet out of the membership.
// The newest first, because a busy owner works through its oldest. A
// backup does not hear the owner's claims (it is not subscribed to the
// partition), so each look replaces the tasks earlier looks put in its
// window with the ones it found: those the owner took meanwhile go (and
// with them any still pending that newer overdue tasks pushed out of the
// look's batch: the owner or a later look claims those). While it finds nothing it looks half as often each time, down to
// once per sweep interval, and as often as WithBackupDelay again once it
// finds one.

// standbyBatch is how many overdue tasks of one partition and kind a look
// claims at most.
const standbyBatch = 32

// standbyLoop looks for overdue tasks of the backed-up partitions until
// ctx ends.
func (n *Node) standbyLoop(ctx context.Context) {
	defer n.bg.Done()
	fastest := max(n.cfg.backupDelay, 10*time.Millisecond)
	wait := fastest
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.standbyKick:
			wait = fastest
		}
		if n.standby(ctx) > 0 {
			wait = fastest
		} else {
			wait = min(2*wait, n.cfg.sweep)
		}
		t.Reset(wait)
	}
}

// standby is one look: it claims the overdue tasks found, and returns how
// many it found.
func (n *Node) standby(ctx context.Context) int {
	n.mu.Lock()
	backed := n.shares.backed
	cut := n.nowLocked().Add(-n.cfg.backupDelay)
	n.mu.Unlock()
	tasks, _, err := n.drv.LoadDue(ctx, backed, cut, true, standbyBatch*n.drv.Partitions())
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: standby: failed", "err", err)
			n.followFailover(err)
		}
		return 0
	}
	found := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		found[t.ID] = true
	}
	var gone []string
	n.mu.Lock()
	for id, e := range n.loaded {
		if e.backup && !found[id] {
			gone = append(gone, id)
		}
	}
	n.mu.Unlock()
	for _, id := range gone {
		n.unload(id)
	}
	for _, t := range tasks {
		n.enter(t.ID, t.Kind, t.Due.UnixMicro(), 0, true)
	}
	return len(tasks)
}
