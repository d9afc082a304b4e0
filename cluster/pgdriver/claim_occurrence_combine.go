package pgdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Combining the claims of periodic occurrences (ClaimOccurrence;
// batcher.go), as Claim's are combined (claim_combine.go): the claims
// that wait while one is in flight go in one statement,
// claimManyOccurrences, which applies claimOccurrence's rules to each of
// their rows. Two occurrences of one periodic task (one kind) never go in
// one statement, so the overlap and misfire rules of one see what the
// other did, as alone; those of different tasks are independent. The
// rule of each (stpe_occurrence_rule) takes its kind's advisory lock, in
// the order of the kinds' lock keys, so two such statements never wait on
// each other in a cycle; the rows are then locked in ID order, as a
// combined Claim locks them. Each call gets the answer its lone statement
// would have given; a caller that gave up while its claim was in flight
// has its won claim handed back (Release). A call the statement does
// not answer (no task holds its ID, or the task is of another kind than
// the call said) is then claimed alone.

// occurrenceAsk is one claim of an occurrence: claimOccurrence's
// arguments.
type occurrenceAsk struct {
	id, kind, token string
	lease           time.Duration
	due             time.Time
	o               driver.Occurrence
}

// claimManyOccurrences claims the occurrences of the IDs $1 (distinct,
// of distinct kinds), each with the arguments of claimOccurrence at the
// same index of the arrays $2 (owner token), $3 (lease µs), $4 (node),
// $5 (asked time), $6 (misfire), $7 (overlap), $8 (next occurrence),
// $9 (threshold µs), $10 (retention µs) and $11 (the occurrence's due
// time), if the task of the ID is of the kind of the same index of $12;
// it answers a row per ID claimed so, claimOccurrence's columns after the
// ID. An ID it does not answer (no task, or one of another kind than
// asked) is claimed again alone: only a kind the statement was asked for
// is known to be in it once.
var claimManyOccurrences = named(`
WITH ask AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::timestamptz[], $6::text[],
        $7::boolean[], $8::timestamptz[], $9::bigint[], $10::bigint[], $11::timestamptz[], $12::text[])
        AS a(id, token, lease, node, due, misfire, overlap, next_due, threshold, retention, occ_due, kind)
), rule AS MATERIALIZED (
    SELECT a.id, r.verdict, r.blocked_until
    FROM (
        SELECT ask.*, hashtext(t.kind) AS lock_key FROM ask JOIN stpe_tasks t ON t.id = ask.id AND t.kind = ask.kind
        ORDER BY lock_key, ask.id OFFSET 0
    ) a CROSS JOIN LATERAL stpe_occurrence_rule(a.id, coalesce(a.due, 'infinity'), a.misfire, a.overlap,
        a.next_due, a.threshold, a.occ_due) r
), cur AS MATERIALIZED (
    SELECT t.id, t.state, t.kind, t.payload, t.due, t.run_at, t.max_retries, t.attempts, t.lost_runs, t.metadata,
        md5(t.payload) AS sum, `+isPaused+` AS paused, rule.verdict, rule.blocked_until
    FROM stpe_tasks t JOIN rule ON rule.id = t.id
    WHERE rule.verdict IS NOT NULL
    ORDER BY t.id
    FOR UPDATE OF t
), won AS (
    UPDATE stpe_tasks t SET `+claimSet+`
    FROM cur JOIN ask ON ask.id = cur.id
    WHERE t.id = cur.id AND cur.state = 'pending' AND NOT cur.paused AND cur.verdict = 'claim'
        AND cur.run_at <= coalesce(ask.due, 'infinity') AND cur.run_at <= statement_timestamp()
    RETURNING t.id, t.lease_expires
), skipped AS (
    DELETE FROM stpe_tasks t USING cur
    WHERE t.id = cur.id AND cur.state = 'pending' AND cur.verdict = 'skip'
    RETURNING t.id
), marking AS (
    SELECT cur.id, cur.kind, cur.due, cur.sum, ask.retention
    FROM cur JOIN ask ON ask.id = cur.id
    WHERE cur.state = 'pending' AND cur.verdict = 'skip'
), marked AS (
    INSERT INTO stpe_done_marks (id, kind, due, payload_md5, expires_at)
    SELECT id, kind, due, sum, statement_timestamp() + retention * interval '1 microsecond'
    FROM marking WHERE retention > 0
    ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, due = EXCLUDED.due,
        payload_md5 = EXCLUDED.payload_md5, expires_at = EXCLUDED.expires_at
)
SELECT cur.id, cur.state, cur.kind, cur.run_at, statement_timestamp(), cur.paused, won.lease_expires,
    CASE WHEN won.lease_expires IS NOT NULL THEN cur.payload END, cur.due, cur.max_retries, cur.attempts,
    cur.lost_runs, cur.metadata, cur.verdict, cur.blocked_until, EXISTS (SELECT 1 FROM skipped s WHERE s.id = cur.id)
FROM cur LEFT JOIN won ON won.id = cur.id`, map[string]string{"$token": "ask.token", "$lease": "ask.lease", "$node": "ask.node"})

// newOccurrenceBatcher is the batcher of s's claims of occurrences: two
// of one kind (one periodic task) never share a statement.
func newOccurrenceBatcher(s *Store) *batcher[occurrenceAsk, claimGot] {
	return &batcher[occurrenceAsk, claimGot]{
		key:  func(q occurrenceAsk) string { return q.kind },
		fits: func(occurrenceAsk, occurrenceAsk) bool { return true },
		run:  s.claimOccurrencesCombined,
	}
}

// claimOccurrenceArgs are claimOccurrence's arguments for q, in order.
func (s *Store) claimOccurrenceArgs(q occurrenceAsk) []any {
	var next *time.Time
	if !q.o.Next.IsZero() {
		n := toTime(q.o.Next)
		next = &n
	}
	return []any{q.id, q.token, micros(q.lease), s.claimer(q.token), toTime(q.due),
		q.o.Misfire, q.o.Overlap, next, micros(q.o.Threshold), micros(q.o.Retention), toTime(q.o.Due)}
}

// occurrenceColumns are claimManyOccurrences' arguments: column j holds
// argument j of each of rows (claimOccurrenceArgs, then the kind), as an
// array of its type.
func occurrenceColumns(rows [][]any) []any {
	cols := []any{make([]string, 0, len(rows)), make([]string, 0, len(rows)), make([]int64, 0, len(rows)),
		make([]string, 0, len(rows)), make([]time.Time, 0, len(rows)), make([]string, 0, len(rows)),
		make([]bool, 0, len(rows)), make([]*time.Time, 0, len(rows)), make([]int64, 0, len(rows)),
		make([]int64, 0, len(rows)), make([]time.Time, 0, len(rows)), make([]string, 0, len(rows))}
	for _, r := range rows {
		for j, v := range r {
			switch c := cols[j].(type) {
			case []string:
				cols[j] = append(c, v.(string))
			case []int64:
				cols[j] = append(c, v.(int64))
			case []time.Time:
				cols[j] = append(c, v.(time.Time))
			case []bool:
				cols[j] = append(c, v.(bool))
			case []*time.Time:
				cols[j] = append(c, v.(*time.Time))
			}
		}
	}
	return cols
}

// claimOccurrencesCombined answers each of calls: alone with
// claimOccurrence, or together with claimManyOccurrences. If the
// statement fails, each call gets its error.
func (s *Store) claimOccurrencesCombined(ctx context.Context, calls []*batchCall[occurrenceAsk, claimGot]) {
	if len(calls) == 1 {
		c := calls[0]
		c.a.c, c.a.found, c.err = s.claimTask(ctx, claimOccurrence, true, s.claimOccurrenceArgs(c.q)...)
		return
	}
	args := make([][]any, len(calls))
	for i, c := range calls {
		args[i] = append(s.claimOccurrenceArgs(c.q), c.q.kind)
	}
	found, err := s.claimOccurrenceIDs(ctx, occurrenceColumns(args))
	for _, c := range calls {
		if err != nil {
			c.err = err
			continue
		}
		c.a.c, c.a.found = found[c.q.id]
		if !c.a.found {
			c.a.c, c.a.found, c.err = s.claimTask(ctx, claimOccurrence, true, s.claimOccurrenceArgs(c.q)...)
		}
		if c.err == nil {
			c.err = s.withdrawn(ctx, c.ctx, c.q.id, c.q.token, &c.a)
		}
	}
}

// claimOccurrenceIDs runs claimManyOccurrences with the argument columns
// cols and returns what it found by ID.
func (s *Store) claimOccurrenceIDs(ctx context.Context, cols []any) (map[string]claimFound, error) {
	rows, err := s.pool.Query(ctx, claimManyOccurrences, cols...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[string]claimFound)
	for rows.Next() {
		var (
			id      string
			c       claimFound
			expires *time.Time
		)
		dest := append([]any{&id}, c.dest(&expires)...)
		if err := rows.Scan(append(dest, &c.verdict, &c.blocked, &c.skipped)...); err != nil {
			return nil, err
		}
		c.read(expires)
		found[id] = c
	}
	return found, rows.Err()
}
