package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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
	score, member, err := decodeCursor(what, q.State, q.Kind, q.Cursor)
	if err != nil {
		return Page{}, err
	}
	m := merger{st: n.st, q: q, desc: q.State == Dead || q.State == Done, paused: map[int][]string{}}
	from := position{}
	if q.Cursor != "" {
		from = position{set: true, score: score, member: member}
	}
	entries, err := m.page(ctx, from)
	if err != nil {
		return Page{}, n.failed(what, err)
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.member
	}
	infos, err := n.st.infos(ctx, ids, q.State)
	if err != nil {
		return Page{}, n.failed(what, err)
	}
	page := Page{Tasks: make([]Info, 0, len(ids))}
	for _, e := range entries {
		if info, ok := infos[e.member]; ok {
			if q.State == Pending {
				// the score the listing is ordered by, as read
				info.NextRun = time.UnixMicro(e.at)
			}
			page.Tasks = append(page.Tasks, info)
		}
	}
	if len(entries) == q.Limit {
		last := entries[len(entries)-1]
		page.Next = encodeCursor(q.State, q.Kind, last.score, last.member)
	}
	return page, nil
}

// position is a place in a listing: after the task member at score, or
// the start when set is false.
type position struct {
	set           bool
	score, member string
}

// listed is one task of a partition's page: its ID, its score as Redis
// wrote it, and that score as a number.
type listed struct {
	member, score string
	at            int64
}

// source is one partition's part of a listing: the tasks read from it and
// not merged yet, whether it may hold more after them, and the position
// after the last one read.
type source struct {
	part partition
	buf  []listed
	more bool
	pos  position
}

// merger lists a page of q over every partition.
type merger struct {
	st   store
	q    ListQuery
	desc bool
	// paused holds the paused kinds last found in each partition (by
	// index), given to its next read.
	paused map[int][]string
}

// share is how many tasks the first read of a page asks of each of p
// partitions: about twice a partition's share of the page, so that a
// second read is rare.
func share(limit, p int) int {
	return min(limit, 2*((limit+p-1)/p)+8)
}

// page merges the next q.Limit tasks after from, over every partition.
func (m merger) page(ctx context.Context, from position) ([]listed, error) {
	srcs := make([]*source, len(m.st.parts))
	for i, p := range m.st.parts {
		srcs[i] = &source{part: p, more: true, pos: from}
	}
	if err := m.read(ctx, srcs, share(m.q.Limit, len(srcs))); err != nil {
		return nil, err
	}
	out := make([]listed, 0, m.q.Limit)
	for len(out) < m.q.Limit {
		var empty []*source
		for _, s := range srcs {
			if len(s.buf) == 0 && s.more {
				empty = append(empty, s)
			}
		}
		if len(empty) > 0 {
			if err := m.read(ctx, empty, m.q.Limit-len(out)); err != nil {
				return nil, err
			}
			continue
		}
		var best *source
		for _, s := range srcs {
			if len(s.buf) > 0 && (best == nil || m.before(s.buf[0], best.buf[0])) {
				best = s
			}
		}
		if best == nil {
			break
		}
		out = append(out, best.buf[0])
		best.buf = best.buf[1:]
	}
	return out, nil
}

// before tells whether a comes before b in the listing's order.
func (m merger) before(a, b listed) bool {
	if a.at != b.at {
		return (a.at < b.at) != m.desc
	}
	return (a.member < b.member) != m.desc
}

// read reads up to limit tasks after each source's position, one script
// per partition in one round trip (two when a partition's paused kinds
// are not those it was given: see pausedCalls).
func (m merger) read(ctx context.Context, srcs []*source, limit int) error {
	parts := make([]partition, len(srcs))
	paused := make([][]string, len(srcs))
	byPart := make(map[int]*source, len(srcs))
	for i, s := range srcs {
		parts[i] = s.part
		paused[i] = m.paused[s.part.Index]
		byPart[s.part.Index] = s
	}
	order := "asc"
	if m.desc {
		order = "desc"
	}
	withPaused := m.q.State == Pending && m.q.Kind == ""
	replies, err := pausedCalls(ctx, m.st.rdb, redisdriver.PageScript, parts, paused, func(p partition, paused []string) scriptCall {
		keys := []string{p.StateSet(string(m.q.State))}
		if m.q.Kind != "" {
			keys[0] = p.KindIndex(string(m.q.State), m.q.Kind)
		}
		pos := byPart[p.Index].pos
		first := "1"
		if pos.set {
			first = "0"
		}
		args := []any{order, first, pos.score, pos.member, limit, "0"}
		if withPaused {
			args[5] = "1"
			keys = append(keys, p.Paused())
			for _, kind := range paused {
				keys = append(keys, p.KindIndex(string(Pending), kind))
				args = append(args, kind)
			}
		}
		return scriptCall{keys: keys, args: args}
	})
	if err != nil {
		return err
	}
	for i, s := range srcs {
		m.paused[s.part.Index] = paused[i]
		vals := stringsOf(replies[i])
		s.buf = s.buf[:0]
		for j := 0; j+1 < len(vals); j += 2 {
			at, err := parseMicros(vals[j+1])
			if err != nil {
				return err
			}
			s.buf = append(s.buf, listed{member: vals[j], score: vals[j+1], at: at})
		}
		s.more = len(s.buf) == limit
		if len(s.buf) > 0 {
			last := s.buf[len(s.buf)-1]
			s.pos = position{set: true, score: last.score, member: last.member}
		}
	}
	return nil
}

// encodeCursor names the position after member, at score, in a listing
// of state and kind.
func encodeCursor(state State, kind, score, member string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(string(state) + "\x00" + kind + "\x00" + score + "\x00" + member))
}

// decodeCursor reads a cursor of a listing of state and kind; "" is the
// first page.
func decodeCursor(what string, state State, kind, cursor string) (score, member string, err error) {
	if cursor == "" {
		return "", "", nil
	}
	bad := func(why string) error {
		return invalid(what, "malformed cursor %q: %s", cursor, why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", "", bad("not one List returned")
	}
	parts := strings.SplitN(string(raw), "\x00", 4)
	if len(parts) != 4 || parts[3] == "" {
		return "", "", bad("not one List returned")
	}
	if State(parts[0]) != state || parts[1] != kind {
		return "", "", bad(fmt.Sprintf("it lists state %q, kind %q", parts[0], parts[1]))
	}
	if _, err := strconv.ParseInt(parts[2], 10, 64); err != nil {
		return "", "", bad("bad position")
	}
	return parts[2], parts[3], nil
}

// infos reads the stored tasks ids, found in state, and the paused kinds
// of their partitions, in one round trip; a task removed meanwhile is left
// out.
func (s store) infos(ctx context.Context, ids []string, state State) (map[string]Info, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	paused := map[int]*redis.StringStructMapCmd{}
	for i, id := range ids {
		p := s.partOf(id)
		cmds[i] = pipe.HGetAll(ctx, p.Task(id))
		if paused[p.Index] == nil {
			paused[p.Index] = pipe.SMembersMap(ctx, p.Paused())
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make(map[string]Info, len(ids))
	for i, id := range ids {
		if f := cmds[i].Val(); len(f) > 0 {
			_, isPaused := paused[s.partOf(id).Index].Val()[f["kind"]]
			out[id] = infoFromHash(id, state, isPaused, f)
		}
	}
	return out, nil
}
