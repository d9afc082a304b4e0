package pgdriver

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Combining completions (Complete; batcher.go): the completions that wait
// while one is in flight, with the same Ending, go in one statement,
// completeMany, which records each run its owner token still holds as
// completeOne records one (fencing by the token, the done markers, the
// done records kept or the tasks deleted, the ended notices of the
// triggers) and counts the runs in the timeline summed per row
// (countRun), so that a batch updates each of its timeline rows once.
// Each call gets the answer its lone statement would have given.

// completeAsk is one completion of a batch.
type completeAsk struct {
	id, token string
	e         Ending
}

// completeMany is completeOne for the tasks of the IDs $1 (distinct),
// each held by the owner token of the same index of $2, rows locked in ID
// order (so two such statements never deadlock); it answers the IDs of
// the runs it recorded.
var completeMany = `
WITH ask AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS a(id, token)
), run AS (
    SELECT t.id, t.partition, t.kind, t.fixed, t.due, md5(t.payload) AS sum, t.run_at, t.claimed_at
    FROM stpe_tasks t JOIN ask ON ask.id = t.id AND t.lease_token = ask.token -- so running (completeOne)
    ORDER BY t.id
    FOR UPDATE OF t
), ` + completeSteps + `
SELECT id FROM run`

// newCompleteBatcher is the batcher of s's completions: those of one
// statement share their Ending.
func newCompleteBatcher(s *Store) *batcher[completeAsk, Outcome] {
	return &batcher[completeAsk, Outcome]{
		key:  func(q completeAsk) string { return q.id },
		fits: func(first, q completeAsk) bool { return first.e == q.e },
		run:  s.completeCombined,
	}
}

// completeCombined answers each of calls: alone with completeOne, or
// together with completeMany. If the statement fails, each call gets its
// error.
func (s *Store) completeCombined(ctx context.Context, calls []*batchCall[completeAsk, Outcome]) {
	e := calls[0].q.e
	minute, ttl := timelineArgs(e.Timeline)
	args := []any{nil, nil, micros(e.Retention), micros(e.Keep.Age), e.Keep.Max, minute, ttl}
	if len(calls) == 1 {
		c := calls[0]
		args[0], args[1] = c.q.id, c.q.token
		var ran int
		if err := s.pool.QueryRow(ctx, completeOne, args...).Scan(&ran); err != nil {
			c.err = failed("complete "+c.q.id, err)
			return
		}
		c.a = recorded(ran > 0)
		return
	}
	ids, tokens := make([]string, len(calls)), make([]string, len(calls))
	for i, c := range calls {
		ids[i], tokens[i] = c.q.id, c.q.token
	}
	args[0], args[1] = ids, tokens
	var done []string
	rows, err := s.pool.Query(ctx, completeMany, args...)
	if err == nil {
		done, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	ran := make(map[string]bool, len(done))
	for _, id := range done {
		ran[id] = true
	}
	for _, c := range calls {
		switch {
		case err != nil:
			c.err = failed("complete "+c.q.id, err)
		case c.ctx.Err() != nil:
			c.err = c.ctx.Err() // recorded or not, as a canceled lone statement
		default:
			c.a = recorded(ran[c.q.id])
		}
	}
}

// recorded is Complete's answer for a run recorded or not.
func recorded(ran bool) Outcome {
	if ran {
		return OutcomeDone
	}
	return OutcomeLost
}
