package cluster

import (
	"context"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The notices nodes hear from each other (driver.Notice): on a
// partition's notices, which a node follows while it owns the partition
// for some kind, that tasks became pending (the node offers them to its
// window), that a node won a claim (the others drop the task), that a task
// was canceled (a node running it cancels the run's ctx at once), that a
// kind was resumed (every node sweeps at once) and that a run of a
// periodic task's occurrence ended (a node with an occurrence waiting for
// that run, misfire.go, tries to claim it again at once); and on the
// membership notices, which every started node hears, that the claimers
// changed: a node joined or left them, or found one expired; every node
// renews its membership at once and so recomputes its share.
//
// A notice is a hint: one lost while a subscription was down is made up
// by the sweep that every (re)subscription asks for, and the heartbeat
// finds a canceled run within a quarter lease.

// announceMembership tells every node that the claimers changed.
func (n *Node) announceMembership(ctx context.Context) {
	if err := n.drv.AnnounceMembership(ctx); err != nil && ctx.Err() == nil {
		n.cfg.logger.Warn("cluster: membership: announce failed", "err", err)
	}
}

// follow makes the node's subscription follow exactly the partitions in
// want; nothing while the node is not started, or stopped.
func (n *Node) follow(ctx context.Context, want []int) error {
	n.subMu.Lock()
	defer n.subMu.Unlock()
	if n.sub == nil {
		return nil
	}
	return n.sub.Follow(ctx, want)
}

// sharesMoved follows a change of this node's share: it subscribes to the
// channels of the partitions it now owns (and drops the others), unloads
// the tasks it no longer owns (but those it claims as a backup, which the
// standby's next look, asked for here, sorts out), and sweeps the ones it
// now owns.
func (n *Node) sharesMoved(ctx context.Context) {
	n.mu.Lock()
	want := n.shares.followed()
	var drop []string
	for id, e := range n.loaded {
		if !e.backup && !n.shares.owns(e.kind, partitionIndex(id, n.cfg.partitions)) {
			drop = append(drop, id)
		}
	}
	n.mu.Unlock()
	if err := n.follow(ctx, want); err != nil && ctx.Err() == nil {
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

// hear acts on a notice.
func (n *Node) hear(e driver.Notice) {
	switch e.Kind {
	case driver.NoticeSubscribed, driver.NoticeResumed:
		n.requestSweep()
	case driver.NoticeInterrupted:
		n.cfg.logger.Warn("cluster: pub/sub: receive failed", "err", e.Err)
	case driver.NoticeMembership:
		kickNow(n.renewKick)
	case driver.NoticePending:
		for _, t := range e.Tasks {
			n.offer(t.ID, t.Kind, t.Due.UnixMicro())
		}
	case driver.NoticeClaimed:
		n.unload(e.ID)
	case driver.NoticeCanceled:
		n.unload(e.ID)
		n.cancelRun(e.ID)
	case driver.NoticeEnded:
		n.wakeBlocked(e.TaskKind)
	}
}
