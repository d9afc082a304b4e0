package cluster

import (
	"cmp"
	"context"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"maps"
	"slices"

	"github.com/redis/go-redis/v9"
)

// Pausing a kind across the cluster: Node.Pause, Node.Resume and
// Node.PausedKinds (asynq's Inspector.PauseQueue and UnpauseQueue; River
// pauses a queue with Client.QueuePause).
//
// Every partition has its set of paused kinds (q:paused), which the
// scripts on its tasks read; Pause and Resume change it in every
// partition. A pending task of a paused kind keeps its due time in its
// kind's pending index but leaves the pending set that the nodes load
// their windows from and claim from, so no node loads or claims it, and
// the tasks of other kinds due later are not held up behind it. Every
// script that makes a task pending (schedule, retry, hand-back, reap, the
// actions) checks the set, and the claim checks it again. Resume puts the
// kind's tasks back into each partition's pending set and publishes
// "resumed <kind>" on the partition's channel, on which the nodes that
// hear it sweep at once.

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
	return n.everyPartition(ctx, "pause "+kind, redisdriver.PauseScript, pauseKeys(kind),
		func(partition) []any { return []any{kind} })
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
	return n.everyPartition(ctx, "resume "+kind, redisdriver.ResumeScript, pauseKeys(kind),
		func(p partition) []any { return []any{kind, p.Channel()} })
}

// pauseKeys are the keys of redisdriver.PauseScript and redisdriver.ResumeScript for kind in p.
func pauseKeys(kind string) func(p partition) []string {
	return func(p partition) []string {
		return []string{p.Pending(), p.Paused(), p.KindIndex(string(Pending), kind)}
	}
}

// everyPartition runs sc in every partition, in one round trip, with the
// keys and arguments of each; if some fail, the error says in how many of
// how many it succeeded, and wraps the first failure.
func (n *Node) everyPartition(ctx context.Context, what string, sc *redis.Script,
	keys func(partition) []string, args func(partition) []any) error {
	calls := make([]scriptCall, len(n.st.parts))
	for i, p := range n.st.parts {
		calls[i] = scriptCall{keys: keys(p), args: args(p)}
	}
	cmds, err := evalEach(ctx, n.st.rdb, sc, calls)
	if err != nil {
		return n.failed(what, err)
	}
	var firstErr error
	failures := 0
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			failures++
			firstErr = cmp.Or(firstErr, err)
		}
	}
	if failures > 0 {
		return n.failed(what, fmt.Errorf("done in %d of %d partitions, try again: %w",
			len(cmds)-failures, len(cmds), firstErr))
	}
	return nil
}

// PausedKinds returns the paused kinds of the prefix, sorted, read from
// every partition in one round trip: a kind paused in some partitions only
// (a Pause or Resume that failed half way) is reported paused.
func (n *Node) PausedKinds(ctx context.Context) ([]string, error) {
	sets, err := n.st.pausedSets(ctx)
	if err != nil {
		return nil, n.failed("paused kinds", err)
	}
	kinds := []string{}
	for _, set := range sets {
		kinds = union(kinds, slices.Collect(maps.Keys(set)))
	}
	slices.Sort(kinds)
	return kinds, nil
}
