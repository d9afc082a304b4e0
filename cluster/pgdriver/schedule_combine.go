package pgdriver

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Combining Schedule calls: the calls that arrive while one insert is in
// flight wait for it, and the next one stores them all in one multi-row
// statement, so that concurrent callers share one round trip and one
// commit. Each commit that notifies takes PostgreSQL's one lock of
// notifying commits (held until its commit ends), so a commit per task
// makes concurrent inserts queue behind each other; a commit per batch
// does not. A lone call runs alone, as before: combining costs a caller
// nothing when no other is in flight. The batch is a statement of its own
// (autocommit), not a transaction: each task's insert is independent, and
// the tasks whose ID is taken are answered by each caller's own
// statements (Store.schedule), as a lone call would be. If the combined
// insert fails, each caller stores its task itself, and gets its own
// answer or error (Exists, if the failure came after the commit). River
// and asynq insert one job per call and transaction.

// maxCombined bounds the tasks of one combined insert.
const maxCombined = 1000

// combineTimeout bounds a combined insert, which runs detached from its
// callers' contexts: one caller giving up must not fail the others.
const combineTimeout = 30 * time.Second

// combiner gathers the pending Schedule calls of a Store.
type combiner struct {
	mu    sync.Mutex // guards queue and busy
	queue []*scheduleCall
	busy  bool // an insert is in flight; the queue waits for it
	// insert stores the tasks of calls and answers each.
	insert func(ctx context.Context, calls []*scheduleCall)
}

// scheduleCall is one Schedule call waiting in a combiner.
type scheduleCall struct {
	task Task
	// done is closed once the call is answered: res and err, or alone
	// set (its task was not stored by the combined insert, or that
	// failed), telling the caller to run its task itself.
	done  chan struct{}
	res   ScheduleResult
	err   error
	alone bool
	// lead is closed when the call is to run the next insert.
	lead chan struct{}
}

// schedule stores c.task, combined with the calls that wait beside it; it
// returns with c answered, or with ctx's error once ctx ends (the task
// may then be stored or not, as a canceled statement's may).
func (b *combiner) schedule(ctx context.Context, c *scheduleCall) error {
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.busy {
		b.mu.Unlock()
		select {
		case <-c.done:
			return nil
		case <-c.lead:
		case <-ctx.Done():
			// Withdrawn, or taken into an insert in flight, which
			// answers no one now: either way the caller gives up.
			b.withdraw(c)
			return ctx.Err()
		}
		b.mu.Lock()
	}
	b.busy = true
	b.run(ctx)
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run takes the queue (up to maxCombined calls, the oldest, the first
// of them the leading call, whose context is ctx) with b.mu held, inserts
// it with b.mu released, and hands the lead to the oldest call left, if
// any. The leading call alone runs on its own ctx; a batch runs detached
// from its callers.
func (b *combiner) run(ctx context.Context) {
	n := min(len(b.queue), maxCombined)
	calls := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	b.mu.Unlock()
	if n > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), combineTimeout)
		defer cancel()
	}
	b.insert(ctx, calls)
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.busy = false
	} else {
		close(b.queue[0].lead)
	}
	b.mu.Unlock()
}

// withdraw takes c out of the queue, unless an insert took it already,
// and passes the lead on if c held it.
func (b *combiner) withdraw(c *scheduleCall) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.queue, c)
	if i < 0 {
		return
	}
	if i == 0 {
		select {
		case <-c.lead: // leading: the lead passes to the next, if any
			b.queue = b.queue[1:]
			if len(b.queue) == 0 {
				b.busy = false
			} else {
				close(b.queue[0].lead)
			}
			return
		default:
		}
	}
	b.queue = slices.Delete(b.queue, i, i+1)
}

// insertCombined stores the tasks of calls in one multi-row insert on the
// pool (each row notifies its partition, as a lone insert does) and
// answers each call: Created, or alone for a task whose ID is taken (or
// given twice) and for every call if the insert failed, so that its
// caller runs it itself and gets its own answer or error. The rows go in
// by ID, so that two combined inserts of the same IDs never deadlock.
func (s *Store) insertCombined(ctx context.Context, calls []*scheduleCall) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	if len(calls) == 1 {
		c := calls[0]
		c.res, c.err = s.schedule(ctx, s.pool, c.task)
		return
	}
	byID := slices.Clone(calls)
	slices.SortStableFunc(byID, func(a, b *scheduleCall) int { return strings.Compare(a.task.ID, b.task.ID) })
	tasks := make([]Task, len(byID))
	for i, c := range byID {
		tasks[i] = c.task
	}
	created, err := s.insertMany(ctx, s.pool, tasks)
	// In the order of the insert, whose first task of an ID is the one
	// stored: a later call with that ID finds it, alone.
	for _, c := range byID {
		if err == nil && created[c.task.ID] {
			c.res = Created
			delete(created, c.task.ID)
			continue
		}
		c.alone = true
	}
}
