package cluster

import (
	"errors"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/driver"
	"strings"

	"github.com/go-stpe/scheduler"
)

// Errors: the sentinels callers test with errors.Is, the causes a run's ctx
// is canceled with, and the one shape of every error the package makes,
// "cluster: what: why".

// ErrIDConflict is wrapped (together with scheduler.ErrInvalidArgument) by
// the error of Node.Schedule when the caller's ID already names a different
// task (another kind, payload or due time), stored or run within the
// retention. The stored task is left as it was. asynq's counterpart is
// ErrTaskIDConflict; Quartz's is ObjectAlreadyExistsException.
var ErrIDConflict = driver.ErrIDConflict

// ErrStopped is wrapped by the error of Node.Start on a node already
// started or stopped; a Node runs once, like a scheduler.Scheduler.
var ErrStopped = errors.New("cluster: node already started or stopped")

// ErrLayout is wrapped by the error of Node.Start, and of Migrate, when
// the keyspace of the prefix is not laid out as this node expects: it
// holds tasks in the single-slot layout of an earlier version (run
// "stpectl migrate" or Migrate, see docs/cluster-upgrade.md), or its
// layout record (prefix:layout) names another number of partitions than
// WithPartitions, or a layout version this node does not know. Nothing is
// changed in the keyspace then. River's counterpart is the error of a
// client whose database schema needs a migration.
var ErrLayout = driver.ErrLayout

// ErrTaskTimeout is the cause a run's ctx is canceled with when its time
// limit (WithTaskTimeout) passes, and is wrapped by the error recorded for
// that run (Info.LastError holds its text).
var ErrTaskTimeout = errors.New("cluster: handler time limit passed")

// errLeaseLost is the cause a run's ctx is canceled with when its lease was
// taken away (it expired, or the task was canceled).
var errLeaseLost = errors.New("cluster: lease lost (it expired, or the task was canceled)")

// errTaskCanceled is the cause a run's ctx is canceled with when this node
// learns that Node.Cancel removed its task; it wraps errLeaseLost.
var errTaskCanceled = failed("task canceled", errLeaseLost)

// errHandBack is the cause a run's ctx is canceled with when Node.Stop's ctx
// ends before the run: the task is handed back to pending.
var errHandBack = errors.New("cluster: node stopping, task handed back")

// errKilled is the cause a run's ctx is canceled with by Node.StopNow: the
// task is left to its lease.
var errKilled = errors.New("cluster: node stopped now, task left to its lease")

// errDeadline is returned by a Redis call on the lease path that did not
// answer within its deadline (bounded); its outcome is unknown.
var errDeadline = errors.New("no answer within the lease deadline")

// invalidError is bad input: "cluster: what: why", wrapping
// scheduler.ErrInvalidArgument.
type invalidError struct{ what, why string }

func (e *invalidError) Error() string { return "cluster: " + e.what + ": " + e.why }

func (e *invalidError) Unwrap() error { return scheduler.ErrInvalidArgument }

// invalid returns an invalidError whose why is format with args.
func invalid(what, format string, args ...any) error {
	return &invalidError{what: what, why: fmt.Sprintf(format, args...)}
}

// failed returns "cluster: what: err", wrapping err; the package's own
// "cluster: " at the start of err's text is not said twice.
func failed(what string, err error) error {
	return &failure{what: what, err: err}
}

// failed returns "cluster: what: redis <address>: err" for a failed Redis
// call of the node, wrapping err: the address of the node's Redis server
// is named once, unless err's text names it already (as a failed dial
// does) or the client is a cluster client, whose failing master the
// error does not say. A node made by NewWithDriver names its store as
// the driver's Addr does ("cluster: what: <addr>: err").
func (n *Node) failed(what string, err error) error {
	addr := n.drv.Addr()
	if addr == "" || strings.Contains(err.Error(), addr) {
		return failed(what, err)
	}
	if n.rdb != nil {
		return &failure{what: what, store: "redis " + addr, err: err}
	}
	return &failure{what: what, store: addr, err: err}
}

// failure is the error of an operation that failed: "cluster: what: err",
// with "<store>: " before err when store is set.
type failure struct {
	what, store string
	err         error
}

func (e *failure) Error() string {
	why := strings.TrimPrefix(e.err.Error(), "cluster: ")
	if e.store != "" {
		why = e.store + ": " + why
	}
	return "cluster: " + e.what + ": " + why
}

func (e *failure) Unwrap() error { return e.err }
