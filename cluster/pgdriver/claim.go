package pgdriver

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// The claim: one statement locks the task's row, reads it and, if it is
// pending and due, moves it to running for one owner token, with a lease,
// so only one node can win it (the row lock makes a second claimer wait,
// then find it running) and every other answer says what the row held.
// Whether the task is due is judged by the database's clock, so a node
// whose clock runs ahead never starts a task early.

// ClaimOutcome is what a claim found.
type ClaimOutcome int

const (
	// ClaimGone: the task is not pending: claimed elsewhere, canceled,
	// done, dead or never stored.
	ClaimGone ClaimOutcome = iota
	// ClaimWon: the caller holds the task's lease.
	ClaimWon
	// ClaimNotDue: the task is pending, but not due yet by the database's
	// clock (Claim.RunAt says when, Claim.DBNow what the clock said).
	ClaimNotDue
	// ClaimPaused: the task is pending, due, and of a paused kind.
	ClaimPaused
)

// Claim is what a claim returned.
type Claim struct {
	Outcome ClaimOutcome
	// Task is the claimed task (ClaimWon; ID and Kind for ClaimNotDue
	// and ClaimPaused too).
	Task Task
	// RunAt is the time the task was pending for.
	RunAt time.Time
	// Attempts and LostRuns are its failed and lost runs so far.
	Attempts, LostRuns int
	// LeaseExpires is when the won lease ends by the database's clock.
	LeaseExpires time.Time
	// DBNow is the database's clock at the claim (ClaimNotDue).
	DBNow time.Time
}

// claimSet is the SET list of a claim: $token, $lease (µs) and $node (the
// store's Options.Node) are the placeholders named.
const claimSet = `state = 'running', lease_token = $token, claimed_at = statement_timestamp(), claimed_by = $node,
    lease_expires = statement_timestamp() + $lease::bigint * interval '1 microsecond',
    updated_at = statement_timestamp()`

// claimReturning is what a won claim reads back, in claimedTask's order.
const claimReturning = `t.id, t.kind, t.payload, t.due, t.run_at, t.max_retries, t.attempts, t.lost_runs, t.metadata, t.lease_expires`

// isPaused is the condition that the kind of the row t is paused,
// notPaused that it is not.
const (
	isPaused  = `EXISTS (SELECT 1 FROM stpe_paused_kinds p WHERE p.kind = t.kind)`
	notPaused = `NOT ` + isPaused
)

// claimOneSQL is the statement of the claim of one task, for owner $2
// under a lease of $3 µs by node $4, if it is pending for no later than
// $5 (NULL: whatever time) and due by the database's clock: the row of
// ID $1 is locked and read first (cur), so the answer says what the claim
// found on the row's latest version, and the claim never waits for more
// than that row; a won claim returns its lease's expiry. With periodic,
// stpe_occurrence_rule decides first (rule: $6 misfire, $7 overlap, $8
// next occurrence, $9 threshold µs, $11 the occurrence's due time), and
// a skipped occurrence is deleted, leaving its done marker for $10 µs. It
// answers no row when no task holds the ID.
func claimOneSQL(periodic bool) string {
	rule, gate, wonGate, skip, from, more, sum := "", "", "", "", "cur", "", ""
	if periodic {
		const verdict = `(SELECT verdict FROM rule)`
		rule = `rule AS MATERIALIZED (
    SELECT verdict, blocked_until
    FROM stpe_occurrence_rule($1, coalesce($5::timestamptz, 'infinity'), $6, $7, $8, $9, $11)
), `
		// cur reads the verdict in its condition, so the rule decides (and
		// takes its lock) before the row is read.
		gate = ` AND ` + verdict + ` IS NOT NULL`
		wonGate = ` AND ` + verdict + ` = 'claim'`
		skip = `, skipped AS (
    DELETE FROM stpe_tasks t USING cur
    WHERE t.id = cur.id AND cur.state = 'pending' AND ` + verdict + ` = 'skip'
    RETURNING t.id
), ` + markDone("cur", "state = 'pending' AND "+verdict+" = 'skip'", "$10")
		from = "rule CROSS JOIN cur"
		more = ", rule.verdict, rule.blocked_until, EXISTS (SELECT 1 FROM skipped)"
		sum = "md5(t.payload) AS sum, "
	}
	return named(`
WITH `+rule+`cur AS MATERIALIZED (
    SELECT t.id, t.state, t.kind, t.payload, t.due, t.run_at, t.max_retries, t.attempts, t.lost_runs, t.metadata,
        `+sum+isPaused+` AS paused
    FROM stpe_tasks t WHERE t.id = $1`+gate+`
    FOR UPDATE OF t
), won AS (
    UPDATE stpe_tasks t SET `+claimSet+`
    FROM cur WHERE t.id = cur.id AND cur.state = 'pending' AND NOT cur.paused
        AND cur.run_at <= coalesce($5::timestamptz, 'infinity') AND cur.run_at <= statement_timestamp()`+wonGate+`
    RETURNING t.lease_expires
)`+skip+`
SELECT cur.state, cur.kind, cur.run_at, statement_timestamp(), cur.paused, won.lease_expires,
    CASE WHEN won.lease_expires IS NOT NULL THEN cur.payload END, cur.due, cur.max_retries, cur.attempts,
    cur.lost_runs, cur.metadata`+more+`
FROM `+from+` LEFT JOIN won ON true`, map[string]string{"$token": "$2", "$lease": "$3", "$node": "$4"})
}

var (
	claimOne        = claimOneSQL(false)
	claimOccurrence = claimOneSQL(true)
)

// claimFound is what the claim of one task found (claimOneSQL): the
// task's row as it was locked, the database's clock, whether the claim
// won and, for an occurrence's claim, the periodic rule's verdict, when
// the run it waits for ends (blocked) and whether it was skipped.
type claimFound struct {
	Claim
	state   State
	paused  bool
	won     bool
	verdict string
	blocked *time.Time
	skipped bool
}

// claimTask runs sql, a claimOneSQL, with args; found is false when no
// task holds the ID.
func (s *Store) claimTask(ctx context.Context, sql string, periodic bool, args ...any) (c claimFound, found bool, err error) {
	var expires *time.Time
	dest := c.dest(&expires)
	if periodic {
		dest = append(dest, &c.verdict, &c.blocked, &c.skipped)
	}
	err = s.pool.QueryRow(ctx, sql, args...).Scan(dest...)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return claimFound{}, false, nil
	case err != nil:
		return claimFound{}, false, err
	}
	c.read(expires)
	return c, true, nil
}

// dest are the destinations of claimOneSQL's first columns, the won
// lease's expiry read into expires.
func (c *claimFound) dest(expires **time.Time) []any {
	return []any{&c.state, &c.Task.Kind, &c.RunAt, &c.DBNow, &c.paused, expires, &c.Task.Payload, &c.Task.Due,
		&c.Task.MaxRetries, &c.Attempts, &c.LostRuns, &c.Task.Metadata}
}

// read completes c once scanned: won if the claim has a lease's expiry.
func (c *claimFound) read(expires *time.Time) {
	if expires != nil {
		c.won, c.Outcome, c.LeaseExpires = true, ClaimWon, *expires
	}
}

// Claim claims task id for the owner token with a lease, if it is pending
// and due by the database's clock (River's JobGetAvailable for one job,
// the cluster package's claim script), in one statement that locks the
// task's row alone (claims made while one is in flight go together in
// the next statement, claim_combine.go). Only one of many claimers of a
// task wins. token
// should be fresh for each claim: Complete, Fail, Release and Extend
// check it.
func (s *Store) Claim(ctx context.Context, id, token string, lease time.Duration) (Claim, error) {
	if err := validClaim("claim "+id, id, token, lease); err != nil {
		return Claim{}, err
	}
	c, found, err := s.claim(ctx, claimAsk{id: id, token: token, lease: lease})
	if err != nil {
		return Claim{}, failed("claim "+id, err)
	}
	c.Task.ID = id
	switch {
	case !found || c.state != Pending:
		return Claim{Outcome: ClaimGone}, nil
	case c.won:
		return c.Claim, nil
	case c.paused:
		return Claim{Outcome: ClaimPaused, Task: Task{ID: id, Kind: c.Task.Kind}, RunAt: c.RunAt}, nil
	case c.RunAt.After(c.DBNow):
		return Claim{Outcome: ClaimNotDue, Task: Task{ID: id, Kind: c.Task.Kind}, RunAt: c.RunAt, DBNow: c.DBNow}, nil
	}
	return Claim{Outcome: ClaimGone}, nil
}

// ClaimDueParams are the arguments of ClaimDue.
type ClaimDueParams struct {
	// Partitions are those to claim from (all if nil).
	Partitions []int
	// Token is the owner token of every claim of the call; make it fresh
	// for each call.
	Token string
	// Lease is each claim's lease.
	Lease time.Duration
	// Limit is the most tasks claimed.
	Limit int
	// OverdueBy claims only the tasks due at least that long ago by the
	// database's clock (a backup's delay; 0 claims every due task).
	OverdueBy time.Duration
}

// claimManySQL is ClaimDue's statement, for all partitions or (some)
// those of $1: $2 token, $3 lease (µs), $4 limit, $5 overdue by (µs), $6
// the paused kinds, $7 node. The paused kinds come as a parameter for the scan, so
// that the planner reads the due index in order and stops at the limit
// (a join with stpe_paused_kinds, whose size it cannot know, makes it
// sort every due task first); the UPDATE checks the table again, so a
// kind paused before the statement began is never claimed.
func claimManySQL(some bool) string {
	where := "AND $1::integer[] IS NULL" // all: $1 is NULL, named so that its type is known
	if some {
		where = "AND t.partition = ANY($1::integer[])"
	}
	return named(`
WITH due AS (
    SELECT t.id FROM stpe_tasks t
    WHERE t.state = 'pending' `+where+`
      AND t.run_at <= statement_timestamp() - $5::bigint * interval '1 microsecond'
      AND t.kind <> ALL ($6::text[])
    ORDER BY t.run_at
    LIMIT $4
    FOR UPDATE SKIP LOCKED
)
UPDATE stpe_tasks t SET `+claimSet+`
FROM due WHERE t.id = due.id AND t.state = 'pending' AND `+notPaused+`
RETURNING `+claimReturning, map[string]string{"$token": "$2", "$lease": "$3", "$node": "$7"})
}

var (
	claimManyAll  = claimManySQL(false)
	claimManySome = claimManySQL(true)
)

// ClaimDue claims up to p.Limit due tasks of p.Partitions, oldest run
// time first, skipping the rows other claimers hold locked (FOR UPDATE
// SKIP LOCKED), as River's JobGetAvailable does: many nodes can call it
// at once, and each task goes to one of them.
func (s *Store) ClaimDue(ctx context.Context, p ClaimDueParams) ([]Claim, error) {
	if err := validClaim("claim due", "-", p.Token, p.Lease); err != nil {
		return nil, err
	}
	if p.Limit < 1 || p.OverdueBy < 0 {
		return nil, invalid("claim due", "limit %d < 1 or overdue by %v < 0", p.Limit, p.OverdueBy)
	}
	if err := s.validPartitions("claim due", p.Partitions); err != nil {
		return nil, err
	}
	paused, err := s.pausedKinds(ctx)
	if err != nil {
		return nil, failed("claim due", err)
	}
	sql := claimManyAll
	if p.Partitions != nil {
		sql = claimManySome
	}
	rows, err := s.pool.Query(ctx, sql, partitionsArg(p.Partitions), p.Token, micros(p.Lease), p.Limit, micros(p.OverdueBy), paused, s.node)
	if err != nil {
		return nil, failed("claim due", err)
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Claim, error) { return claimedTask(r) })
	if err != nil {
		return nil, failed("claim due", err)
	}
	return claims, nil
}

// claimedTask reads a row of claimReturning.
func claimedTask(r pgx.Row) (Claim, error) {
	c := Claim{Outcome: ClaimWon}
	err := r.Scan(&c.Task.ID, &c.Task.Kind, &c.Task.Payload, &c.Task.Due, &c.RunAt, &c.Task.MaxRetries,
		&c.Attempts, &c.LostRuns, &c.Task.Metadata, &c.LeaseExpires)
	return c, err
}

// validClaim checks a claim's arguments.
func validClaim(what, id, token string, lease time.Duration) error {
	switch {
	case id == "":
		return invalid(what, "empty task ID")
	case token == "":
		return invalid(what, "empty owner token")
	case lease < time.Millisecond:
		return invalid(what, "lease %v shorter than a millisecond", lease)
	}
	return nil
}

// validPartitions checks that each of parts is a partition of the store.
func (s *Store) validPartitions(what string, parts []int) error {
	for _, p := range parts {
		if p < 0 || p >= s.partitions {
			return invalid(what, "partition %d out of [0, %d)", p, s.partitions)
		}
	}
	return nil
}

// partitionsArg is parts as a statement's integer[] argument, nil (all
// partitions) for nil.
func partitionsArg(parts []int) []int32 {
	if parts == nil {
		return nil
	}
	out := make([]int32, len(parts))
	for i, p := range parts {
		out[i] = int32(p)
	}
	return out
}
