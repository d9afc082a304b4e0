package pgdriver

import (
	"context"
	"time"
)

// Combining claims of one task each (Claim; batcher.go): the claims that
// wait while one is in flight go in one statement, claimManyIDs, which
// applies claimOneSQL's rules to each of their rows: it locks the rows
// (in ID order, so two such statements never deadlock), reads each as
// locked, and moves to running for its own owner token and lease each
// one pending for no later than its call's time and due by the
// database's clock. Each call gets the answer its lone statement would
// have given. A caller that gave up while its claim was in flight has
// its won claim handed back (Release), so no task is left claimed for
// nobody.

// claimAsk is one claim of a batch: $5 of claimOneSQL is due (nil for
// whatever time).
type claimAsk struct {
	id, token string
	lease     time.Duration
	due       *time.Time
}

// claimGot is a claim's answer: what it found, and whether a task holds
// the ID.
type claimGot struct {
	c     claimFound
	found bool
}

// claimManyIDs claims the tasks of the IDs $1 (distinct), each for the
// owner token, lease (µs) and latest time (NULL: whatever time) of the
// same index of $2, $3 and $4, by the node of the same index of $5, as
// claimOne claims one; it
// answers a row per ID a task holds, claimOne's columns after the ID.
var claimManyIDs = named(`
WITH ask AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::text[]) AS a(id, token, lease, due, node)
), cur AS MATERIALIZED (
    SELECT t.id, t.state, t.kind, t.payload, t.due, t.run_at, t.max_retries, t.attempts, t.lost_runs, t.metadata,
        `+isPaused+` AS paused
    FROM stpe_tasks t WHERE t.id = ANY($1::text[])
    ORDER BY t.id
    FOR UPDATE OF t
), won AS (
    UPDATE stpe_tasks t SET `+claimSet+`
    FROM cur JOIN ask ON ask.id = cur.id
    WHERE t.id = cur.id AND cur.state = 'pending' AND NOT cur.paused
        AND cur.run_at <= coalesce(ask.due, 'infinity') AND cur.run_at <= statement_timestamp()
    RETURNING t.id, t.lease_expires
)
SELECT cur.id, cur.state, cur.kind, cur.run_at, statement_timestamp(), cur.paused, won.lease_expires,
    CASE WHEN won.lease_expires IS NOT NULL THEN cur.payload END, cur.due, cur.max_retries, cur.attempts,
    cur.lost_runs, cur.metadata
FROM cur LEFT JOIN won ON won.id = cur.id`, map[string]string{"$token": "ask.token", "$lease": "ask.lease", "$node": "ask.node"})

// newClaimBatcher is the batcher of s's claims.
func newClaimBatcher(s *Store) *batcher[claimAsk, claimGot] {
	return &batcher[claimAsk, claimGot]{
		key:  func(q claimAsk) string { return q.id },
		fits: func(claimAsk, claimAsk) bool { return true },
		run:  s.claimCombined,
	}
}

// claim answers q, combined with the claims in flight beside it.
func (s *Store) claim(ctx context.Context, q claimAsk) (claimFound, bool, error) {
	got, err := s.claims.do(ctx, q)
	return got.c, got.found, err
}

// claimCombined answers each of calls: alone with claimOne, or together
// with claimManyIDs. If the statement fails, each call gets its error.
func (s *Store) claimCombined(ctx context.Context, calls []*batchCall[claimAsk, claimGot]) {
	if len(calls) == 1 {
		c := calls[0]
		c.a.c, c.a.found, c.err = s.claimTask(ctx, claimOne, false, c.q.id, c.q.token, micros(c.q.lease), s.claimer(c.q.token), c.q.due)
		return
	}
	ids, tokens := make([]string, len(calls)), make([]string, len(calls))
	leases, dues := make([]int64, len(calls)), make([]*time.Time, len(calls))
	for i, c := range calls {
		ids[i], tokens[i], leases[i], dues[i] = c.q.id, c.q.token, micros(c.q.lease), c.q.due
	}
	found, err := s.claimIDs(ctx, ids, tokens, leases, dues)
	for _, c := range calls {
		if err != nil {
			c.err = err
			continue
		}
		c.a.c, c.a.found = found[c.q.id]
		c.err = s.withdrawn(ctx, c.ctx, c.q.id, c.q.token, &c.a)
	}
}

// withdrawn is the error of a combined claim of id by token whose caller
// (callCtx) gave up while it was in flight: its context's error, the
// answer a cleared and the claim handed back if won (no one is left
// holding it); nil if the caller still waits.
func (s *Store) withdrawn(ctx, callCtx context.Context, id, token string, a *claimGot) error {
	if callCtx.Err() == nil {
		return nil
	}
	if a.c.won {
		_, _ = s.Release(ctx, id, token)
	}
	*a = claimGot{}
	return callCtx.Err()
}

// claimIDs runs claimManyIDs and returns what it found by ID.
func (s *Store) claimIDs(ctx context.Context, ids, tokens []string, leases []int64, dues []*time.Time) (map[string]claimFound, error) {
	nodes := make([]string, len(tokens))
	for i, token := range tokens {
		nodes[i] = s.claimer(token)
	}
	rows, err := s.pool.Query(ctx, claimManyIDs, ids, tokens, leases, dues, nodes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[string]claimFound, len(ids))
	for rows.Next() {
		var (
			id      string
			c       claimFound
			expires *time.Time
		)
		if err := rows.Scan(append([]any{&id}, c.dest(&expires)...)...); err != nil {
			return nil, err
		}
		c.read(expires)
		found[id] = c
	}
	return found, rows.Err()
}
