package pgdriver

import (
	"context"
	"slices"
	"strings"
)

// Combining Schedule calls (batcher.go): the calls that arrive while one
// insert is in flight wait for it, and the next one stores them all in
// one multi-row statement, so that concurrent callers share one round
// trip and one commit. Each commit that notifies takes PostgreSQL's one
// lock of notifying commits (held until its commit ends), so a commit per
// task makes concurrent inserts queue behind each other; a commit per
// batch does not. The batch is a statement of its own (autocommit), not a
// transaction: each task's insert is independent, and the tasks whose ID
// is taken are answered by each caller's own statements (Store.schedule),
// on its own context, as a lone call would be. Calls of one ID may share
// a batch: the first is the one stored, and the others, answered alone,
// find it. If the combined insert fails, each caller stores its task
// itself, and gets its own answer or error (Exists, if the failure came
// after the commit). A caller whose context ends while its call waits is
// withdrawn, its task never inserted; once the call is in an insert in
// flight, the caller returns at once, its task stored or not, as a
// canceled statement's is. River and asynq insert one job per call and
// transaction.

// scheduleGot is the answer to a Schedule call from its batch: its
// result, or alone: the combined insert did not store its task (its ID
// is taken, or the insert failed), and its caller is to run it itself.
type scheduleGot struct {
	res   ScheduleResult
	alone bool
}

// newScheduleBatcher is the batcher of Schedule's calls, run answers a
// statement's calls (Store.insertCombined). Calls of one ID share a
// statement, and a caller gives up at once (abandon): an insert has
// nothing to undo.
func newScheduleBatcher(run func(ctx context.Context, calls []*batchCall[Task, scheduleGot])) *batcher[Task, scheduleGot] {
	return &batcher[Task, scheduleGot]{run: run, abandon: true}
}

// insertCombined answers calls: one alone by its own insert on its
// caller's ctx; more by one multi-row insert on the pool (each row
// notifies its partition, as a lone insert does), each answered Created,
// or alone for a task whose ID is taken (or given twice) and for every
// call if the insert failed. The rows go in by ID, so that two combined
// inserts of the same IDs never deadlock.
func (s *Store) insertCombined(ctx context.Context, calls []*batchCall[Task, scheduleGot]) {
	if len(calls) == 1 {
		c := calls[0]
		c.a.res, c.err = s.schedule(ctx, s.pool, c.q)
		return
	}
	byID := slices.Clone(calls)
	slices.SortStableFunc(byID, func(a, b *batchCall[Task, scheduleGot]) int { return strings.Compare(a.q.ID, b.q.ID) })
	tasks := make([]Task, len(byID))
	for i, c := range byID {
		tasks[i] = c.q
	}
	created, err := s.insertMany(ctx, s.pool, tasks)
	// In the order of the insert, whose first task of an ID is the one
	// stored: a later call with that ID finds it, alone.
	for _, c := range byID {
		if err == nil && created[c.q.ID] {
			c.a.res = Created
			delete(created, c.q.ID)
			continue
		}
		c.a.alone = true
	}
}
