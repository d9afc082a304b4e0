package redisdriver

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// The layout record: prefix:layout (Keys.Layout), a hash that says how the
// keyspace of a prefix is laid out: field "version" (LayoutVersion: the
// tasks spread over partitions) and field "partitions" (their number). The
// first node to start on a keyspace writes it; every later node checks it,
// so that two nodes never read the same keyspace two ways: a node with
// another number of partitions would look for each task in the wrong
// partition. Versions before partitions wrote no record and kept every
// task under the prefix itself (OldLayout); a node of this version refuses
// such a keyspace until Migrate has moved its tasks.

// Prepare loads the scripts a node runs on every task (LoadScripts), so
// that the first call of each is one round trip (EVALSHA) like every later
// one (driver.Coordination).
func (d *Driver) Prepare(ctx context.Context) error { return LoadScripts(ctx, d.rdb) }

// CheckLayout makes sure the keyspace is laid out as this driver reads
// it, atomically (LayoutScript; driver.Coordination): it writes the layout record if there is
// none, and refuses, with a *driver.LayoutError, a keyspace that holds
// tasks in the old single-slot layout (LayoutOld without a record,
// LayoutStray with one: a node of an earlier version runs on it), a
// record of another number of partitions, or a record of a version it
// does not know. Found names the old key that holds tasks, the version or
// the number recorded.
func (d *Driver) CheckLayout(ctx context.Context) error {
	old := OldLayout{Prefix: d.keys.Prefix}
	kinds, err := oldKinds(ctx, d.rdb, old)
	if err != nil {
		return err
	}
	keys := []string{d.keys.Layout()}
	for _, st := range driver.States {
		keys = append(keys, old.StateSet(string(st)))
	}
	for _, k := range kinds {
		keys = append(keys, old.KindIndex(string(driver.Pending), k))
	}
	res, err := LayoutScript.Run(ctx, d.rdb, keys, LayoutVersion, strconv.Itoa(len(d.parts))).StringSlice()
	if err != nil {
		return err
	}
	if len(res) != 2 {
		return errors.New("unexpected reply")
	}
	e := &driver.LayoutError{Found: res[1], Record: d.keys.Layout()}
	switch res[0] {
	case "ok", "created":
		return nil
	case "old":
		e.Reason = driver.LayoutOld
	case "stray":
		e.Reason = driver.LayoutStray
	case "version":
		e.Reason = driver.LayoutVersion
	default:
		e.Reason = driver.LayoutPartitions
	}
	return e
}

// oldKinds are the kinds the old layout names: its kinds with tasks and
// its paused kinds.
func oldKinds(ctx context.Context, rdb redis.UniversalClient, old OldLayout) ([]string, error) {
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

// RecordedPartitions reads the layout record (driver.Coordination): 0 if
// there is none; a *driver.LayoutError for a version other than
// LayoutVersion (LayoutVersion) or a number that is not one
// (LayoutPartitions).
func (d *Driver) RecordedPartitions(ctx context.Context) (int, error) {
	v, err := d.rdb.HMGet(ctx, d.keys.Layout(), "version", "partitions").Result()
	if err != nil {
		return 0, err
	}
	if v[0] == nil && v[1] == nil {
		return 0, nil
	}
	version, _ := v[0].(string)
	text, _ := v[1].(string)
	if version != LayoutVersion {
		return 0, &driver.LayoutError{Reason: driver.LayoutVersion, Found: version, Record: d.keys.Layout()}
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 {
		return 0, &driver.LayoutError{Reason: driver.LayoutPartitions, Found: text, Record: d.keys.Layout()}
	}
	return n, nil
}
