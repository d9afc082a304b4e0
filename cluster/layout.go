package cluster

import (
	"context"
	"errors"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The layout record: prefix:layout, a hash that says how the keyspace of a
// prefix is laid out: field "version" (layoutVersion: the tasks spread over
// partitions) and field "partitions" (their number, WithPartitions). The
// first node to start on a keyspace writes it; every later node checks it,
// so that two nodes never read the same keyspace two ways: a node with
// another number of partitions would look for each task in the wrong
// partition. Versions before partitions wrote no record and kept every
// task under the prefix itself (oldLayout); a node of this version refuses
// such a keyspace until Migrate has moved its tasks. River checks its
// schema's migration version the same way before it starts.

// layoutVersion is the layout this version writes and reads.
const layoutVersion = redisdriver.LayoutVersion

// oldLayout names the keys of the single-slot layout of the versions
// before partitions (the Redis driver's OldLayout).
type oldLayout = redisdriver.OldLayout

// states are the four states, in the order a task found in more than one
// old set is taken to be in (the old scripts' task_state order).
var states = []State{Running, Dead, Done, Pending}

// layoutKey is the key of the layout record.
func layoutKey(prefix string) string { return redisdriver.Keys{Prefix: prefix}.Layout() }

// layoutError is a keyspace laid out otherwise than this node expects:
// "cluster: layout: why", wrapping ErrLayout.
type layoutError struct{ why string }

func (e *layoutError) Error() string { return "cluster: layout: " + e.why }

func (e *layoutError) Unwrap() error { return ErrLayout }

// checkLayout makes sure the keyspace of the prefix is laid out as this
// store reads it, atomically: it writes the layout record if there is
// none, and refuses, with an error wrapping ErrLayout, a keyspace that
// holds tasks in the old single-slot layout (Migrate moves them; with a
// record, a node of an earlier version still runs on the migrated
// keyspace), a record of another number of partitions, or a record of a
// version it does not know. A Redis error is returned wrapped. Node.Start
// calls it before anything else.
func (s store) checkLayout(ctx context.Context) error {
	old := oldLayout{Prefix: s.prefix}
	kinds, err := oldKinds(ctx, s.rdb, old)
	if err != nil {
		return failed("check the keyspace layout", err)
	}
	keys := []string{layoutKey(s.prefix)}
	for _, st := range states {
		keys = append(keys, old.StateSet(string(st)))
	}
	for _, k := range kinds {
		keys = append(keys, old.KindIndex(string(Pending), k))
	}
	parts := strconv.Itoa(len(s.parts))
	res, err := redisdriver.LayoutScript.Run(ctx, s.rdb, keys, layoutVersion, parts).StringSlice()
	if err != nil {
		return failed("check the keyspace layout", err)
	}
	if len(res) != 2 {
		return failed("check the keyspace layout", errors.New("unexpected reply"))
	}
	switch res[0] {
	case "ok", "created":
		return nil
	case "old":
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(s.prefix) +
			" holds tasks in the single-slot layout of an earlier version (" + res[1] +
			") and no layout record: stop every node of the earlier version, run \"stpectl migrate\"" +
			" (or cluster.Migrate) with -partitions " + parts + ", then start the nodes of this version" +
			" (see docs/cluster-upgrade.md)"}
	case "stray":
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(s.prefix) +
			" was migrated to partitions, but holds tasks in the single-slot layout again (" + res[1] +
			"): a node of an earlier version still runs on it; stop it, then run \"stpectl migrate\"" +
			" again to move its tasks (see docs/cluster-upgrade.md)"}
	case "version":
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(s.prefix) +
			" is recorded in layout version " + strconv.Quote(res[1]) + " (" + layoutKey(s.prefix) +
			"), which this version does not know (it reads version " + layoutVersion + ")"}
	default:
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(s.prefix) +
			" is recorded with " + res[1] + " partitions (" + layoutKey(s.prefix) + "), but this node has " +
			parts + " (WithPartitions): every node of a keyspace must use the number it was created with"}
	}
}

// oldKinds are the kinds the old layout names: its kinds with tasks and
// its paused kinds.
func oldKinds(ctx context.Context, rdb redis.UniversalClient, old oldLayout) ([]string, error) {
	pipe := rdb.Pipeline()
	withTasks := pipe.SMembers(ctx, old.Kinds())
	paused := pipe.SMembers(ctx, old.Paused())
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	var kinds []string
	for _, k := range append(withTasks.Val(), paused.Val()...) {
		if !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	return kinds, nil
}

// RecordedPartitions returns the number of partitions recorded for the
// keyspace of prefix (prefix:layout), so that a tool can make a node, or
// read the keyspace, with the right WithPartitions; 0 and no error if no
// node of this version has started on it yet. A record of a layout
// version this version does not know is an error wrapping ErrLayout; a
// Redis error is returned wrapped.
func RecordedPartitions(ctx context.Context, rdb redis.UniversalClient, prefix string) (int, error) {
	v, err := rdb.HMGet(ctx, layoutKey(prefix), "version", "partitions").Result()
	if err != nil {
		return 0, failed("read the layout record", err)
	}
	if v[0] == nil && v[1] == nil {
		return 0, nil
	}
	version, _ := v[0].(string)
	text, _ := v[1].(string)
	if version != layoutVersion {
		return 0, &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) +
			" is recorded in layout version " + strconv.Quote(version) +
			", which this version does not know (it reads version " + layoutVersion + ")"}
	}
	n, err := strconv.Atoi(text)
	if err != nil || validatePartitions(n) != nil {
		return 0, &layoutError{why: "the layout record of prefix " + strconv.Quote(prefix) +
			" names " + strconv.Quote(text) + " partitions"}
	}
	return n, nil
}
