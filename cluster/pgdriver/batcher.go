package pgdriver

import (
	"context"
	"slices"
	"sync"
)

// Combining the calls of one step (Claim, Complete): the calls that
// arrive while one statement of the step is in flight wait for it, and
// the next statement serves them all, one round trip and one commit for
// the lot, each call getting its own answer (the Redis driver's
// coalescing of claims and completions, its coalesce.go). A lone call
// runs alone at once, on its caller's context: combining costs nothing
// when no other call is in flight. A combined statement runs detached
// from its callers' contexts (bounded by combineTimeout), so that one
// caller giving up fails no other. Two calls of the same key (a task's
// ID) never go in one statement: the later waits for the next, so each
// sees what the earlier did, as it would alone.

// batchCall is one call waiting in a batcher: its question q and, once
// done is closed, its answer a or err.
type batchCall[Q, A any] struct {
	ctx context.Context // the caller's: a batch's runner checks it after the statement
	q   Q
	a   A
	err error
	// done is closed once the call is answered.
	done chan struct{}
	// lead is closed when the call is to run the next statement.
	lead chan struct{}
}

// batcher gathers the pending calls of one step of a Store.
type batcher[Q, A any] struct {
	mu    sync.Mutex // guards queue and busy
	queue []*batchCall[Q, A]
	busy  bool // a statement is in flight; the queue waits for it
	// key is what two calls of one statement must not share.
	key func(q Q) string
	// fits says whether q may go in a statement with first (whose
	// statement takes some arguments once for all its calls).
	fits func(first, q Q) bool
	// run answers each of calls (at least one), on ctx.
	run func(ctx context.Context, calls []*batchCall[Q, A])
}

// do answers q, combined with the calls that wait beside it. A caller
// whose ctx ends while it waits is withdrawn, unanswered (ctx's error);
// one taken into a statement already in flight waits for that statement,
// whose runner answers it with ctx's error, undoing what it must (a won
// claim is handed back).
func (b *batcher[Q, A]) do(ctx context.Context, q Q) (A, error) {
	c := &batchCall[Q, A]{ctx: ctx, q: q, done: make(chan struct{}), lead: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.busy {
		b.mu.Unlock()
		select {
		case <-c.done:
			return c.a, c.err
		case <-c.lead:
		case <-ctx.Done():
			if b.withdraw(c) {
				var none A
				return none, ctx.Err()
			}
			<-c.done
			return c.a, c.err
		}
		b.mu.Lock()
	}
	b.busy = true
	b.next(ctx)
	<-c.done
	return c.a, c.err
}

// next takes from the queue, with b.mu held, the oldest call (the
// leading one, whose context is ctx) and, up to maxCombined, the later
// ones that fit with it and share no key; runs them with b.mu released;
// and hands the lead to the oldest call left, if any.
func (b *batcher[Q, A]) next(ctx context.Context) {
	first := b.queue[0].q
	taken := make(map[string]bool)
	var calls, rest []*batchCall[Q, A]
	for i, c := range b.queue {
		k := b.key(c.q)
		if i == 0 || len(calls) < maxCombined && !taken[k] && b.fits(first, c.q) {
			taken[k] = true
			calls = append(calls, c)
			continue
		}
		rest = append(rest, c)
	}
	b.queue = rest
	b.mu.Unlock()
	if len(calls) > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), combineTimeout)
		defer cancel()
	}
	b.run(ctx, calls)
	for _, c := range calls {
		close(c.done)
	}
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.busy = false
	} else {
		close(b.queue[0].lead)
	}
	b.mu.Unlock()
}

// withdraw takes c out of the queue and reports true, unless a statement
// took it already; it passes the lead on if c held it.
func (b *batcher[Q, A]) withdraw(c *batchCall[Q, A]) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.queue, c)
	if i < 0 {
		return false
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	select {
	case <-c.lead: // leading: the lead passes to the next, if any
		if len(b.queue) == 0 {
			b.busy = false
		} else {
			close(b.queue[0].lead)
		}
	default:
	}
	return true
}
