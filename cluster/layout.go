package cluster

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/redis/go-redis/v9"
)

// The layout record says how the keyspace of a prefix is laid out: the
// version of its layout (the tasks spread over partitions) and the number
// of partitions (WithPartitions). The first node to start on a keyspace
// writes it; every later node checks it (driver.Coordination's CheckLayout),
// so that two nodes never read the same keyspace two ways: a node with
// another number of partitions would look for each task in the wrong
// partition. Versions before partitions wrote no record and kept every
// task under the prefix itself; a node of this version refuses such a
// keyspace until Migrate has moved its tasks. River checks its schema's
// migration version the same way before it starts.

// layoutVersion is the layout this version writes and reads.
const layoutVersion = redisdriver.LayoutVersion

// layoutError is a keyspace laid out otherwise than this node expects:
// "cluster: layout: why", wrapping ErrLayout.
type layoutError struct{ why string }

func (e *layoutError) Error() string { return "cluster: layout: " + e.why }

func (e *layoutError) Unwrap() error { return ErrLayout }

// prepareStore checks the keyspace's layout, then readies the store
// (driver.Coordination's CheckLayout and Prepare): Node.Start calls it
// before anything else. A keyspace laid out otherwise is an error
// wrapping ErrLayout that says what to do (see layoutMismatch); a store
// error is returned wrapped.
func (n *Node) prepareStore(ctx context.Context) error {
	err := n.drv.CheckLayout(ctx)
	if n.rdb == nil {
		err = checkedStoreLayout(err, n.drv)
	} else {
		err = checkedLayout(err, n.cfg.prefix, n.drv.Partitions())
	}
	if err != nil {
		return err
	}
	if err := n.drv.Prepare(ctx); err != nil {
		return failed("start", err)
	}
	return nil
}

// checkedLayout words the error of a driver's CheckLayout on the keyspace
// of prefix for a node of parts partitions.
func checkedLayout(err error, prefix string, parts int) error {
	if err == nil {
		return nil
	}
	var le *driver.LayoutError
	if errors.As(err, &le) {
		return layoutMismatch(le, prefix, parts)
	}
	return failed("check the keyspace layout", err)
}

// layoutMismatch says why a keyspace's layout refuses a node of parts
// partitions, and what to do.
func layoutMismatch(le *driver.LayoutError, prefix string, parts int) error {
	n := strconv.Itoa(parts)
	switch le.Reason {
	case driver.LayoutOld:
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) +
			" holds tasks in the single-slot layout of an earlier version (" + le.Found +
			") and no layout record: stop every node of the earlier version, run \"stpectl migrate\"" +
			" (or cluster.Migrate) with -partitions " + n + ", then start the nodes of this version" +
			" (see docs/cluster-upgrade.md)"}
	case driver.LayoutStray:
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) +
			" was migrated to partitions, but holds tasks in the single-slot layout again (" + le.Found +
			"): a node of an earlier version still runs on it; stop it, then run \"stpectl migrate\"" +
			" again to move its tasks (see docs/cluster-upgrade.md)"}
	case driver.LayoutVersion:
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) +
			" is recorded in layout version " + strconv.Quote(le.Found) + " (" + le.Record +
			"), which this version does not know (it reads version " + layoutVersion + ")"}
	}
	return &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) +
		" is recorded with " + le.Found + " partitions (" + le.Record + "), but this node has " +
		n + " (WithPartitions): every node of a keyspace must use the number it was created with"}
}

// checkedStoreLayout words the error of CheckLayout of d, a driver given
// to NewWithDriver, which names its store by its address and whose
// partitions are its own setting, not WithPartitions.
func checkedStoreLayout(err error, d driver.Driver) error {
	var le *driver.LayoutError
	if err == nil || !errors.As(err, &le) {
		return checkedLayout(err, "", d.Partitions())
	}
	store := "the store"
	if addr := d.Addr(); addr != "" {
		store += " " + addr
	}
	switch le.Reason {
	case driver.LayoutVersion:
		return &layoutError{why: store + " is recorded in layout version " + strconv.Quote(le.Found) +
			" (" + le.Record + "), which this version does not know (it reads version " + layoutVersion + ")"}
	case driver.LayoutPartitions:
		return &layoutError{why: store + " is recorded with " + le.Found + " partitions (" + le.Record +
			"), but its driver has " + strconv.Itoa(d.Partitions()) +
			": every node of a store must use the number it was created with"}
	}
	return &layoutError{why: store + " holds tasks of an earlier layout (" + le.Found + ")"}
}

// RecordedPartitions returns the number of partitions recorded for the
// keyspace of prefix (its layout record), so that a tool can make a node,
// or read the keyspace, with the right WithPartitions; 0 and no error if
// no node of this version has started on it yet. A record of a layout
// version this version does not know is an error wrapping ErrLayout; a
// Redis error is returned wrapped.
func RecordedPartitions(ctx context.Context, rdb redis.UniversalClient, prefix string) (int, error) {
	drv := redisdriver.New(rdb, redisdriver.Options{Prefix: prefix, Partitions: 1})
	return recordedPartitions(ctx, drv, prefix)
}

// recordedPartitions is RecordedPartitions of drv, on the keyspace of
// prefix.
func recordedPartitions(ctx context.Context, drv driver.Driver, prefix string) (int, error) {
	n, err := drv.RecordedPartitions(ctx)
	var le *driver.LayoutError
	switch {
	case errors.As(err, &le) && le.Reason == driver.LayoutVersion:
		return 0, &layoutError{why: "the keyspace under prefix " + strconv.Quote(prefix) +
			" is recorded in layout version " + strconv.Quote(le.Found) +
			", which this version does not know (it reads version " + layoutVersion + ")"}
	case errors.As(err, &le):
		return 0, &layoutError{why: "the layout record of prefix " + strconv.Quote(prefix) +
			" names " + strconv.Quote(le.Found) + " partitions"}
	case err != nil:
		return 0, failed("read the layout record", err)
	case n != 0 && validatePartitions(n) != nil:
		return 0, &layoutError{why: "the layout record of prefix " + strconv.Quote(prefix) +
			" names " + strconv.Quote(strconv.Itoa(n)) + " partitions"}
	}
	return n, nil
}
