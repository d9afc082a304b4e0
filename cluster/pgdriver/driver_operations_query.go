package pgdriver

import (
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The pieces of SQL the Operations group's reads and bulk actions build
// their statements from: the listing's order of each state, the
// conditions of a selection, and the parameters that go with them.

// stateOrder is the listing's order of the tasks of a state: by the
// column col (the time that places a task in its state), ascending, or
// descending when desc, ties by ID the same way.
type stateOrder struct {
	col  string
	desc bool
}

// stateOrders are the orders of the four states: pending tasks by next
// run, running ones by lease expiry, soonest first; dead and done ones by
// when they died or finished, newest first.
var stateOrders = map[State]stateOrder{
	Pending: {col: "run_at"},
	Running: {col: "lease_expires"},
	Dead:    {col: "finished_at", desc: true},
	Done:    {col: "finished_at", desc: true},
}

// orderBy is the ORDER BY list of o on the alias t, or, with reverse,
// the opposite order (the last task first).
func (o stateOrder) orderBy(t string, reverse bool) string {
	dir := " ASC"
	if o.desc != reverse {
		dir = " DESC"
	}
	return t + "." + o.col + dir + ", " + t + ".id" + dir
}

// statement collects the parameters of a statement as it is built.
type statement struct{ args []any }

// arg adds v as the next parameter and returns its placeholder, cast to
// typ.
func (q *statement) arg(v any, typ string) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args)) + "::" + typ
}

// after is the condition that a row of the alias t comes after pos in
// o's order: a bound on the order's column the index reads from, then the
// tie broken by ID.
func (q *statement) after(o stateOrder, t string, pos driver.Position) string {
	at, id := q.arg(toTime(pos.At), "timestamptz"), q.arg(pos.ID, "text")
	cmp, bound := ">", ">="
	if o.desc {
		cmp, bound = "<", "<="
	}
	col := t + "." + o.col
	return col + " " + bound + " " + at + " AND (" + col + ", " + t + ".id) " + cmp + " (" + at + ", " + id + ")"
}

// selection is the condition that a row of the alias t is in sel (but for
// sel.IDs): its state (a literal, so that the partial indexes of the
// state serve), its kind, and its time in the state's order before
// sel.Before. A done record past its age is no longer stored (Get does
// not find it) and is in no selection.
func (q *statement) selection(sel driver.Selection, t string) string {
	c := t + ".state = '" + string(sel.State) + "'"
	if sel.State == Done {
		c += " AND " + t + ".expires_at > statement_timestamp()"
	}
	if sel.Kind != "" {
		c += " AND " + t + ".kind = " + q.arg(sel.Kind, "text")
	}
	if !sel.Before.IsZero() {
		c += " AND " + t + "." + stateOrders[sel.State].col + " < " + q.arg(toTime(sel.Before), "timestamptz")
	}
	return c
}

// pausedColumn is the column that tells whether the kind of the row of the
// alias t is paused.
func pausedColumn(t string) string {
	return "EXISTS (SELECT 1 FROM stpe_paused_kinds p WHERE p.kind = " + t + ".kind)"
}

// validState checks that state is one of the four.
func validState(what string, state State) error {
	if _, ok := stateOrders[state]; !ok {
		return invalid(what, "unknown state %q", state)
	}
	return nil
}

// infoOf is the stored task t as the drivers read it, paused if its kind
// is.
func infoOf(t StoredTask, paused bool) driver.TaskInfo {
	info := driver.TaskInfo{ID: t.ID, Kind: t.Kind, Payload: t.Payload, Due: t.Due, Attempt: t.Attempts,
		Lost: t.LostRuns, MaxRetries: t.MaxRetries, State: t.State, LastError: t.LastError, Paused: paused,
		History: t.History}
	switch t.State {
	case Pending:
		info.NextRun = t.RunAt
	case Running:
		info.Owner, info.Started = t.LeaseToken, t.ClaimedAt
	case Done:
		info.Finished = t.FinishedAt
	}
	return info
}

// positionOf is the place of t in the listing of its state.
func positionOf(t StoredTask) driver.Position {
	at := map[State]time.Time{Pending: t.RunAt, Running: t.LeaseExpires, Dead: t.FinishedAt, Done: t.FinishedAt}[t.State]
	return driver.Position{At: at, ID: t.ID}
}
