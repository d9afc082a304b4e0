package cluster

import (
	"context"
	"time"
)

// A node's life: Start, then Stop or StopNow, once.

// Start starts running tasks: it checks the keyspace's layout (ErrLayout:
// see WithPartitions and Migrate), joins the membership, subscribes to the
// channels of the partitions it owns, loads the window, and starts the
// sweep, membership, standby, reaper and heartbeat loops. Each confirmed
// subscription asks for a sweep, so no task scheduled after Start returns
// is missed. A second Start is ErrStopped.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.state != stateNew {
		n.mu.Unlock()
		return ErrStopped
	}
	n.state = stateStarted
	n.started = n.cfg.clock.Now()
	n.mu.Unlock()
	if err := n.prepareStore(ctx); err != nil {
		n.abortStart()
		return err
	}
	sub, err := n.drv.Subscribe(ctx, n.hear)
	if err != nil {
		n.abortStart()
		return failed("start: subscribe", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	n.bgCancel = cancel
	n.subMu.Lock()
	n.sub = sub
	n.subMu.Unlock()
	// Joins the membership and follows the owned partitions' notices.
	n.refreshMembers(ctx)
	hb, hbCancel := context.WithCancel(context.Background())
	n.hbCancel = hbCancel
	n.bg.Add(6)
	go n.sweepLoop(bg)
	go n.membershipLoop(bg)
	go n.standbyLoop(bg)
	go n.reapLoop(bg)
	go n.trimLoop(bg)
	go n.timelineLoop(bg)
	n.hb.Add(1)
	go n.heartbeatLoop(hb)
	n.requestSweep()
	return nil
}

// abortStart undoes a Start that failed, so that Start may be tried again.
func (n *Node) abortStart() {
	n.mu.Lock()
	n.state = stateNew
	n.mu.Unlock()
}

// Stop stops the node gracefully (asynq's Server.Shutdown, Quartz's
// shutdown(true)): it stops claiming, leaves every task not yet claimed in
// Redis for the other nodes, hands back at once a task claimed but not yet
// started, and waits for the running handlers and their outcomes' writes.
// If ctx ends first, it cancels their ctx, hands their tasks back to
// pending (no attempt counted), waits for them to return and returns
// ctx.Err(). Nothing is lost. Stop on a node never started only releases
// its resources; later calls do nothing.
func (n *Node) Stop(ctx context.Context) error {
	if !n.beginStop() {
		return nil
	}
	n.announceStopping()
	n.endLoops()
	n.bg.Wait()
	n.sched.Shutdown()
	err := n.sched.AwaitTermination(ctx)
	if err != nil {
		n.runCancel(errHandBack)
		_ = n.sched.AwaitTermination(context.Background())
	}
	n.endStop()
	return err
}

// StopNow stops the node abruptly, as a crash would but without leaking
// anything (the JDK's shutdownNow): it cancels the ctx of running handlers
// and waits for them to return, and leaves the tasks they held to their
// lease, so another node runs them after it expires. A handler that still
// returns nil completes its task.
func (n *Node) StopNow() {
	if !n.beginStop() {
		return
	}
	n.announceStopping()
	n.runCancel(errKilled)
	n.endLoops()
	n.bg.Wait()
	n.sched.ShutdownNow()
	_ = n.sched.AwaitTermination(context.Background())
	n.endStop()
}

// beginStop moves a started node to stopping and reports whether the caller
// should stop it; a node never started is stopped at once.
func (n *Node) beginStop() bool {
	n.mu.Lock()
	state := n.state
	switch state {
	case stateNew:
		n.state = stateStopped
	case stateStarted:
		n.state = stateStopping
	}
	n.mu.Unlock()
	if state == stateNew {
		n.sched.Shutdown()
		n.runCancel(errKilled)
	}
	return state == stateStarted
}

// announceStopping marks the node's record stopping and takes the node out
// of the claimers at once, so that the others stop deferring to it, and
// keeps the record renewed until endStop removes it.
func (n *Node) announceStopping() {
	// As long as leave waits at most: a stop with Redis gone is not held
	// up for longer.
	ctx, cancel := context.WithTimeout(context.Background(), min(n.cfg.lease/4, time.Second))
	n.refreshMembers(ctx)
	cancel()
	reg, regCancel := context.WithCancel(context.Background())
	n.regCancel = regCancel
	n.reg.Add(1)
	go func() {
		defer n.reg.Done()
		every(reg, n.cfg.lease/4, nil, func() { n.refreshMembers(reg) })
	}()
}

// endStop waits for the runs' outcomes being written, ends the heartbeat
// once no run is left, waits for the Redis calls on the lease path that
// missed their deadline to return, and removes the node's membership and
// record.
func (n *Node) endStop() {
	n.outcomes.Wait()
	n.hbCancel()
	n.hb.Wait()
	n.runCancel(errKilled)
	n.calls.Wait()
	n.regCancel()
	n.reg.Wait()
	n.leave()
	n.mu.Lock()
	n.state = stateStopped
	clear(n.loaded)
	clear(n.ready)
	n.mu.Unlock()
}

// endLoops ends the background loops and the subscription (waiting for
// the notices being heard); a share that moves meanwhile follows nothing
// more.
func (n *Node) endLoops() {
	n.subMu.Lock()
	sub := n.sub
	n.sub = nil
	n.subMu.Unlock()
	sub.Close()
	n.bgCancel()
}
