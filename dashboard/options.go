package dashboard

import (
	"fmt"

	"github.com/go-stpe/scheduler/cluster"
)

// Option configures New.
type Option func(*config) error

type config struct {
	readOnly   bool
	queueLimit int
	window     int           // seconds of run history the charts show
	node       *cluster.Node // the cluster whose pages are served, or nil
	pageSize   int           // tasks per page of a cluster listing
}

// ReadOnly turns every action off: the pages show no buttons and the
// action endpoints answer 403 Forbidden.
func ReadOnly() Option {
	return func(c *config) error { c.readOnly = true; return nil }
}

// WithQueueLimit sets how many queued tasks the queue page shows at most
// (100 unless set; a ?limit= query may ask for fewer or up to this many).
func WithQueueLimit(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: queue limit %d: must be at least 1", ErrInvalidArgument, n)
		}
		c.queueLimit = n
		return nil
	}
}

// WithCluster adds the pages of a cluster: the tasks node's store holds,
// by state and kind, one task with its payload and last error, the dead
// tasks, the nodes and the periodic tasks, with the operators' actions
// (run now, retry, reschedule, cancel, delete, pause and resume a kind).
// They read and act through node's methods (Node.Counts, Node.List,
// Node.Get, Node.Retry and the others), so they show the whole cluster on
// node's Redis and key prefix; node need not be started. It is asynq's asynqmon and River's
// River UI for the cluster module.
//
// With WithCluster, New accepts a nil Scheduler and serves the cluster
// pages alone. A nil node is an error wrapping ErrInvalidArgument.
func WithCluster(node *cluster.Node) Option {
	return func(c *config) error {
		if node == nil {
			return fmt.Errorf("%w: cluster node: is nil", ErrInvalidArgument)
		}
		c.node = node
		return nil
	}
}

// WithPageSize sets how many tasks a page of a cluster listing shows (50
// unless set; a ?limit= query may ask for fewer or up to this many). A
// size outside 1 to cluster.MaxPage is an error wrapping
// ErrInvalidArgument.
func WithPageSize(n int) Option {
	return func(c *config) error {
		if n < 1 || n > cluster.MaxPage {
			return fmt.Errorf("%w: page size %d: must be 1 to %d", ErrInvalidArgument, n, cluster.MaxPage)
		}
		c.pageSize = n
		return nil
	}
}
