package redisdriver

import (
	"context"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Listing tasks by state and kind, a page at a time. The tasks are spread
// over the partitions: a page reads, in one round trip, the next few tasks
// after the position in every partition (PageScript), and merges them in
// the listing's order; a partition that runs out of those it gave before
// the page is full is read again (rare: each gives about twice its share
// of the page). A page costs O(P·log² n + limit) in Redis, n the number of
// tasks of a partition in the state (of the kind, when one is given: one
// sorted set per kind and state holds them), P the number of partitions;
// listing every pending task adds that cost once per paused kind.

// List merges a page over every partition, then reads its tasks' hashes
// and their partitions' paused kinds in one more round trip.
func (d *Driver) List(ctx context.Context, q driver.ListQuery) (driver.ListPage, error) {
	m := merger{d: d, q: q, desc: q.State == driver.Dead || q.State == driver.Done, paused: map[int][]string{}}
	from := position{}
	if q.After.ID != "" {
		from = position{set: true, score: strconv.FormatInt(q.After.At.UnixMicro(), 10), member: q.After.ID}
	}
	entries, err := m.page(ctx, from)
	if err != nil {
		return driver.ListPage{}, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.member
	}
	infos, err := d.infos(ctx, ids, q.State)
	if err != nil {
		return driver.ListPage{}, err
	}
	page := driver.ListPage{Tasks: make([]driver.TaskInfo, 0, len(ids))}
	for _, e := range entries {
		if info, ok := infos[e.member]; ok {
			if q.State == driver.Pending {
				// the score the listing is ordered by, as read
				info.NextRun = time.UnixMicro(e.at)
			}
			page.Tasks = append(page.Tasks, info)
		}
	}
	if len(entries) == q.Limit {
		last := entries[len(entries)-1]
		page.Next = driver.Position{At: time.UnixMicro(last.at), ID: last.member}
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
	part Partition
	buf  []listed
	more bool
	pos  position
}

// merger lists a page of q over every partition.
type merger struct {
	d    *Driver
	q    driver.ListQuery
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
	srcs := make([]*source, len(m.d.parts))
	for i, p := range m.d.parts {
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
	parts := make([]Partition, len(srcs))
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
	withPaused := m.q.State == driver.Pending && m.q.Kind == ""
	replies, err := m.d.pausedCalls(ctx, PageScript, parts, paused, func(p Partition, paused []string) scriptCall {
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
				keys = append(keys, p.KindIndex(string(driver.Pending), kind))
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
