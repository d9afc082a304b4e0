package cluster

import "context"

// Pausing a kind across the cluster: Node.Pause, Node.Resume and
// Node.PausedKinds (asynq's Inspector.PauseQueue and UnpauseQueue; River
// pauses a queue with Client.QueuePause).
//
// Every partition has its set of paused kinds, which the steps on its
// tasks read; Pause and Resume change it in every partition. A pending
// task of a paused kind keeps its due time but leaves the order the nodes
// load their windows from and claim from, so no node loads or claims it,
// and the tasks of other kinds due later are not held up behind it. Every
// step that makes a task pending (schedule, retry, hand-back, reap, the
// actions) checks the set, and the claim checks it again. Resume puts the
// kind's tasks back into each partition's pending order and tells the
// nodes listening to the partition, which sweep at once.

// Pause stops every node of the prefix from starting tasks of kind until
// Resume. Its pending tasks, and those that become pending meanwhile
// (scheduled, retried, handed back), stay pending with their due times;
// running ones finish (a failed one waits for its retry in the same way).
// A node that has one in its window drops it when its claim is refused.
// Pausing a paused kind does nothing. Any node may pause, started or not;
// the kind need not have a handler or tasks. One script per partition, all
// in one round trip, moves the kind's pending tasks: O(m log n) for m of
// them among n pending. If some partitions could not be changed, the error
// says in how many of how many the kind is paused; pausing again finishes
// the work. An invalid kind (see Node.Handle; "@" + name pauses a periodic
// task) is an error wrapping scheduler.ErrInvalidArgument, and a kind that
// no live node handles, no partition stores or has paused, no periodic task
// declares and this node does not handle (a typo) one wrapping
// ErrUnknownKind: a kind declared by a handler or a periodic task may be
// paused before any task of it is stored.
func (n *Node) Pause(ctx context.Context, kind string) error {
	if err := validKind(kind); err != nil {
		return failed("pause", err)
	}
	if err := n.checkKnownKind(ctx, "pause "+kind, kind); err != nil {
		return err
	}
	if err := n.drv.Pause(ctx, kind); err != nil {
		return n.failed("pause "+kind, err)
	}
	return nil
}

// Resume lets the nodes start the tasks of a paused kind again: each runs
// at its due time, at once if that has passed, and every started node
// that hears of it reloads its window at once. Resuming a known kind that
// is not paused does nothing; resuming an unknown one is refused with
// ErrUnknownKind. Its cost and errors are Pause's.
func (n *Node) Resume(ctx context.Context, kind string) error {
	if err := validKind(kind); err != nil {
		return failed("resume", err)
	}
	if err := n.checkKnownKind(ctx, "resume "+kind, kind); err != nil {
		return err
	}
	if err := n.drv.Resume(ctx, kind); err != nil {
		return n.failed("resume "+kind, err)
	}
	return nil
}

// PausedKinds returns the paused kinds of the prefix, sorted, read from
// every partition in one round trip: a kind paused in some partitions only
// (a Pause or Resume that failed half way) is reported paused.
func (n *Node) PausedKinds(ctx context.Context) ([]string, error) {
	kinds, err := n.drv.PausedKinds(ctx)
	if err != nil {
		return nil, n.failed("paused kinds", err)
	}
	return kinds, nil
}
