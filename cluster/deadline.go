package cluster

import (
	"context"
	"fmt"
	"time"
)

// Deadlines on the lease path. go-redis ignores a ctx's deadline on the
// wire unless the client was built with ContextTimeoutEnabled, and retries
// a failed command (MaxRetries, default 3) with its own read timeout
// (default 3 s) each time, so a client's settings alone could hold a
// claim, renewal or completion past a 2 s lease. Every Redis call on the
// lease path (claim, renew, complete, fail, release) therefore goes through
// bounded, which stops waiting at its own deadline, derived from the time
// left on the lease:
//
//   - a claim waits at most a third of the lease;
//   - a renewal waits at most the time left on the soonest-expiring lease
//     it renews (but at least a twentieth of a lease), and never more than
//     the renewal period (a quarter lease);
//   - a completion, failure or hand-back is retried until the time left on
//     the run's lease is spent (but for at least a tenth of a lease).
//
// The time left is counted on the monotonic clock from the moment the
// claim or the last successful renewal was sent, a lower bound of the
// expiry Redis stamped with its own clock. A call that misses its deadline
// has an unknown outcome; the store stays consistent either way (a lease
// nobody renews expires and the reaper returns the task).

// bounded runs f with a ctx that ends after d, and returns when f does or
// when d has passed, whichever is first; in the second case the error
// wraps errDeadline and f's result is dropped when it comes. Node.Stop
// waits for every f still running.
func bounded[T any](n *Node, d time.Duration, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	done := make(chan result, 1)
	n.calls.Add(1)
	go func() {
		defer n.calls.Done()
		defer cancel()
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done:
			return r.v, r.err // answered right at the deadline
		default:
		}
		var zero T
		return zero, fmt.Errorf("%w (%v)", errDeadline, d)
	}
}
