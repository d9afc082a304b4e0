package redisdriver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Pausing a kind: every partition has its set of paused kinds (q:paused),
// which the scripts on its tasks read; Pause and Resume change it in every
// partition. A pending task of a paused kind keeps its due time in its
// kind's pending index but leaves the pending set that the nodes load
// their windows from and claim from. Every script that makes a task
// pending checks the set, and the claim checks it again. Resume puts the
// kind's tasks back into each partition's pending set and publishes
// "resumed <kind>" on the partition's channel.

// Pause runs PauseScript in every partition, in one round trip: O(m log n)
// for m pending tasks of kind among n.
func (d *Driver) Pause(ctx context.Context, kind string) error {
	return d.everyPartition(ctx, PauseScript, pauseKeys(kind), func(Partition) []any { return []any{kind} })
}

// Resume runs ResumeScript in every partition, in one round trip.
func (d *Driver) Resume(ctx context.Context, kind string) error {
	return d.everyPartition(ctx, ResumeScript, pauseKeys(kind), func(p Partition) []any { return []any{kind, p.Channel()} })
}

// pauseKeys are the keys of PauseScript and ResumeScript for kind in p.
func pauseKeys(kind string) func(p Partition) []string {
	return func(p Partition) []string {
		return []string{p.Pending(), p.Paused(), p.KindIndex(string(driver.Pending), kind)}
	}
}

// everyPartition runs sc in every partition, in one round trip, with the
// keys and arguments of each; if some fail, the error says in how many of
// how many it succeeded, and wraps the first failure.
func (d *Driver) everyPartition(ctx context.Context, sc *redis.Script, keys func(Partition) []string, args func(Partition) []any) error {
	calls := make([]scriptCall, len(d.parts))
	for i, p := range d.parts {
		calls[i] = scriptCall{keys: keys(p), args: args(p)}
	}
	cmds, err := evalEach(ctx, d.rdb, sc, calls)
	if err != nil {
		return err
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
		return fmt.Errorf("done in %d of %d partitions, try again: %w", len(cmds)-failures, len(cmds), firstErr)
	}
	return nil
}

// PausedKinds reads every partition's paused kinds in one round trip: a
// kind paused in some partitions only (a Pause or Resume that failed half
// way) is reported paused.
func (d *Driver) PausedKinds(ctx context.Context) ([]string, error) {
	sets, err := d.pausedSets(ctx)
	if err != nil {
		return nil, err
	}
	kinds := []string{}
	for _, set := range sets {
		kinds = union(kinds, slices.Collect(maps.Keys(set)))
	}
	slices.Sort(kinds)
	return kinds, nil
}

// pausedSets reads the set of paused kinds of every partition, in one
// pipeline, by partition.
func (d *Driver) pausedSets(ctx context.Context) ([]map[string]struct{}, error) {
	pipe := d.rdb.Pipeline()
	cmds := make([]*redis.StringStructMapCmd, len(d.parts))
	for i, p := range d.parts {
		cmds[i] = pipe.SMembersMap(ctx, p.Paused())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	out := make([]map[string]struct{}, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// errPausedChanging is the cause of the error of an operation that kept
// finding another set of paused kinds than the one it read just before.
var errPausedChanging = errors.New("the paused kinds kept changing")

// pausedRounds is how many times pausedCalls runs a partition's script
// with the paused kinds it found before it gives up.
const pausedRounds = 4

// pausedCalls runs sc once for each of parts, in one pipeline, built by
// call for the kinds believed paused in the partition (paused[i], nil for
// none), and runs it again for the partitions whose script answered
// {"paused", kinds} with those kinds, which it leaves in paused. It
// returns the other answers' second element, by partition. The scripts
// of List and Counts answer so, since a paused kind's pending tasks are
// in its index only.
func (d *Driver) pausedCalls(ctx context.Context, sc *redis.Script, parts []Partition,
	paused [][]string, call func(p Partition, paused []string) scriptCall) ([]any, error) {
	if paused == nil {
		paused = make([][]string, len(parts))
	}
	out := make([]any, len(parts))
	todo := make([]int, len(parts))
	for i := range todo {
		todo[i] = i
	}
	for round := 0; len(todo) > 0; round++ {
		if round == pausedRounds {
			return nil, errPausedChanging
		}
		calls := make([]scriptCall, len(todo))
		for j, i := range todo {
			calls[j] = call(parts[i], paused[i])
		}
		cmds, err := evalEach(ctx, d.rdb, sc, calls)
		if err != nil {
			return nil, err
		}
		var again []int
		for j, i := range todo {
			reply, err := cmds[j].Slice()
			if err != nil {
				return nil, err
			}
			if len(reply) != 2 {
				return nil, fmt.Errorf("%w: %d values", errShortReply, len(reply))
			}
			if tag, _ := reply[0].(string); tag == "paused" {
				paused[i] = stringsOf(reply[1])
				again = append(again, i)
				continue
			}
			out[i] = reply[1]
		}
		todo = again
	}
	return out, nil
}

// stringsOf reads a Redis array of strings; anything else gives nil.
func stringsOf(v any) []string {
	vals, _ := v.([]any)
	out := make([]string, 0, len(vals))
	for _, x := range vals {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
