package dashboard

import (
	"fmt"
	"net/http"

	"github.com/go-stpe/scheduler/cluster"
)

// Option configures New.
type Option func(*config) error

type config struct {
	readOnly       bool
	queueLimit     int           // the most queued tasks a page of the queue shows
	node           *cluster.Node // the cluster whose pages are served, or nil
	pageSize       int           // tasks per page of a cluster listing unless ?limit= says
	trustedOrigins []string      // origins besides the request's own allowed to POST
}

// ReadOnly turns every action off: the pages show no buttons and the
// action endpoints answer 403 Forbidden.
func ReadOnly() Option {
	return func(c *config) error { c.readOnly = true; return nil }
}

// WithQueueLimit sets how many queued tasks one page of the queue may show
// (1000 unless set). A page shows 100, or n if smaller, unless its ?limit=
// asks for another number up to n; a larger one is refused with a 400 that
// says the most. An n outside 1 to 10,000 (the deepest the queue page
// reads) is an error wrapping ErrInvalidArgument.
func WithQueueLimit(n int) Option {
	return func(c *config) error {
		if n < 1 || n > maxQueueWalk {
			return fmt.Errorf("%w: queue limit %d: must be 1 to %d", ErrInvalidArgument, n, maxQueueWalk)
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
// unless set; a ?limit= query may ask for any number up to
// cluster.MaxPage, and a larger one is refused with a 400 that says the
// most). A size outside 1 to cluster.MaxPage is an error wrapping
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

// WithTrustedOrigin lets pages served from origin (scheme://host[:port],
// such as "https://admin.example.com") post actions, besides the
// dashboard's own origin. It is for a reverse proxy that changes the Host
// header on the way in, so that the browser's Origin differs from the
// Host the handler sees. An origin that is not of that form is an error
// wrapping ErrInvalidArgument.
func WithTrustedOrigin(origin string) Option {
	return func(c *config) error {
		if err := http.NewCrossOriginProtection().AddTrustedOrigin(origin); err != nil {
			return fmt.Errorf("%w: trusted origin %q: %v", ErrInvalidArgument, origin, err)
		}
		c.trustedOrigins = append(c.trustedOrigins, origin)
		return nil
	}
}
