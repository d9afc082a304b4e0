package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Listing tasks by state and kind, a page at a time: Node.List. It is
// asynq's Inspector.ListPendingTasks, ListActiveTasks, ListArchivedTasks
// and ListCompletedTasks, and River's JobList with its state and kind
// filters and its cursor.

// MaxPage is the largest page Node.List returns.
const MaxPage = 1000

// ListQuery selects what Node.List returns.
type ListQuery struct {
	// State is the state listed: Pending, Running, Dead or Done.
	State State
	// Kind, if not "", lists only the tasks of that kind.
	Kind string
	// Cursor is "" for the first page, else the Next of the page before,
	// from a query of the same State and Kind. It names the last task of
	// that page by its place in the listing's order: for pending tasks its
	// Info.NextRun and ID.
	Cursor string
	// Limit is the page size, 1 to MaxPage.
	Limit int
}

// Page is one page of a listing.
type Page struct {
	// Tasks are the page's tasks, in the listing's order.
	Tasks []Info
	// Next is the cursor of the following page, or "" after the last.
	Next string
}

// List returns up to q.Limit tasks in q.State (of q.Kind, if given), after
// q.Cursor. Pending tasks come soonest first by Info.NextRun, the time they
// are to run next (a retrying task's retry time, not its Task.Due; those of
// a paused kind too), which each pending Info holds as it was read for the
// listing, so the order shown is the order listed; running ones by the expiry of their
// lease, soonest first, and dead and done ones newest first (by the time
// they died or finished); tasks with the same time are ordered by ID. The
// cursor names the last task of a page by its time and ID, so a task that
// stays in the state while the listing goes on is listed exactly once,
// whatever is added or removed around it; a task that changes state or time
// meanwhile may be missed or seen twice.
//
// The tasks are spread over the partitions: a page reads, in one round
// trip, the next few tasks after the cursor in every partition, and merges
// them in the listing's order; a partition that runs out of those it gave
// before the page is full is read again (rare: each gives about twice its
// share of the page). A page costs O(P·log² n + limit) in Redis, n the
// number of tasks of a partition in the state (of the kind, when one is
// given: one sorted set per kind and state holds them), P the number of
// partitions, whatever the number of other tasks; listing every pending
// task adds that cost once per paused kind.
//
// A state other than Pending, Running, Dead and Done, a kind that is not
// valid (see Node.Handle), a limit outside 1 to MaxPage, or a cursor that
// is not one List returned for that state and kind is an error wrapping
// scheduler.ErrInvalidArgument.
func (n *Node) List(ctx context.Context, q ListQuery) (Page, error) {
	what := "list " + string(q.State)
	if q.Kind != "" {
		what += " " + q.Kind
	}
	if err := validState("list", q.State); err != nil {
		return Page{}, err
	}
	if q.Kind != "" {
		if err := validKind(q.Kind); err != nil {
			return Page{}, failed("list "+string(q.State), err)
		}
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return Page{}, invalid(what, "page size %d: want 1 to %d", q.Limit, MaxPage)
	}
	after, err := decodeCursor(what, q.State, q.Kind, q.Cursor)
	if err != nil {
		return Page{}, err
	}
	got, err := n.drv.List(ctx, driver.ListQuery{State: q.State, Kind: q.Kind, After: after, Limit: q.Limit})
	if err != nil {
		return Page{}, n.failed(what, err)
	}
	page := Page{Tasks: make([]Info, len(got.Tasks))}
	for i, ti := range got.Tasks {
		page.Tasks[i] = infoOf(ti)
	}
	if got.Next.ID != "" {
		page.Next = encodeCursor(q.State, q.Kind, got.Next)
	}
	return page, nil
}

// encodeCursor names the position after pos in a listing of state and
// kind: its time (µs) and its task's ID.
func encodeCursor(state State, kind string, pos driver.Position) string {
	score := strconv.FormatInt(pos.At.UnixMicro(), 10)
	return base64.RawURLEncoding.EncodeToString([]byte(string(state) + "\x00" + kind + "\x00" + score + "\x00" + pos.ID))
}

// decodeCursor reads a cursor of a listing of state and kind; "" is the
// first page, the zero Position.
func decodeCursor(what string, state State, kind, cursor string) (driver.Position, error) {
	if cursor == "" {
		return driver.Position{}, nil
	}
	bad := func(why string) error {
		return invalid(what, "malformed cursor %q: %s", cursor, why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return driver.Position{}, bad("not one List returned")
	}
	parts := strings.SplitN(string(raw), "\x00", 4)
	if len(parts) != 4 || parts[3] == "" {
		return driver.Position{}, bad("not one List returned")
	}
	if State(parts[0]) != state || parts[1] != kind {
		return driver.Position{}, bad(fmt.Sprintf("it lists state %q, kind %q", parts[0], parts[1]))
	}
	us, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return driver.Position{}, bad("bad position")
	}
	return driver.Position{At: time.UnixMicro(us), ID: parts[3]}, nil
}
