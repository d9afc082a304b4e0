package redisdriver

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// The periodic tasks' records: the declarations (prefix:periodic:<name>,
// indexed by prefix:periodic, written by Renew) with the last run of
// each, and the cursors (a hash in the partition of the task's
// occurrences: Partition.PeriodicCursor) holding the latest occurrence
// any node stored (field "stored", µs) and the task's misfire policy and
// overlap setting as last written (fields "misfire", "overlap").

// PeriodicDeclarations reads the live declarations (driver.Coordination).
func (d *Driver) PeriodicDeclarations(ctx context.Context) ([]driver.PeriodicDeclaration, error) {
	recs, err := d.records(ctx, d.keys.Periodic(), d.keys.PeriodicPrefix())
	if err != nil {
		return nil, err
	}
	out := make([]driver.PeriodicDeclaration, 0, len(recs))
	for name, f := range recs {
		p := driver.PeriodicDeclaration{Name: name, Trigger: f["trigger"], Next: timeField(f["next"])}
		if f["last_node"] != "" {
			p.LastRun = &driver.PeriodicRun{
				Node:    f["last_node"],
				Due:     timeField(f["last_due"]),
				Started: timeField(f["last_started"]),
				Ended:   timeField(f["last_ended"]),
				Outcome: driver.Outcome(f["last_outcome"]),
				Error:   f["last_error"],
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// RecordPeriodicRun records run in name's declaration (PeriodicRunScript).
func (d *Driver) RecordPeriodicRun(ctx context.Context, name string, run driver.PeriodicRun) error {
	return PeriodicRunScript.Run(ctx, d.rdb, []string{d.keys.PeriodicPrefix() + name},
		run.Node, strconv.FormatInt(run.Due.UnixMicro(), 10), microsText(run.Started), microsText(run.Ended),
		string(run.Outcome), run.Error).Err()
}

// cursorKey is the cursor of periodic task name.
func (d *Driver) cursorKey(name string) string {
	return d.parts[driver.PeriodicPartition(name, len(d.parts))].PeriodicCursor(name)
}

// periodicKind is the kind of the occurrences of periodic task name.
func periodicKind(name string) string { return "@" + name }

// PeriodicStates reads, in one pipeline, the cursors' settings and, from
// the pending index of each task's occurrences, its first occurrence, the
// latest due at now and the first after now (driver.Coordination).
func (d *Driver) PeriodicStates(ctx context.Context, names []string, now time.Time) (map[string]driver.PeriodicState, error) {
	type read struct {
		settings                *redis.SliceCmd
		first, overdue, onwards *redis.ZSliceCmd
	}
	nowText := strconv.FormatInt(now.UnixMicro(), 10)
	pipe := d.rdb.Pipeline()
	reads := make([]read, len(names))
	for i, name := range names {
		ix := d.parts[driver.PeriodicPartition(name, len(d.parts))].KindIndex(string(driver.Pending), periodicKind(name))
		reads[i] = read{
			settings: pipe.HMGet(ctx, d.cursorKey(name), "misfire", "overlap"),
			first:    pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: ix, Start: 0, Stop: 0}),
			overdue: pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: ix, ByScore: true, Rev: true,
				Start: nowText, Stop: "-inf", Count: 1}),
			onwards: pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: ix, ByScore: true,
				Start: "(" + nowText, Stop: "+inf", Count: 1}),
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make(map[string]driver.PeriodicState, len(names))
	for i, name := range names {
		r := reads[i]
		var s driver.PeriodicState
		if v := r.settings.Val(); len(v) == 2 {
			s.Misfire, s.Found = v[0].(string)
			s.Overlap = v[1] == "1"
		}
		s.First, s.Overdue, s.Onwards = firstTime(r.first.Val()), firstTime(r.overdue.Val()), firstTime(r.onwards.Val())
		out[name] = s
	}
	return out, nil
}

// firstTime is the due time of the first occurrence of zs (from its ID,
// exact to the nanosecond), or the zero Time.
func firstTime(zs []redis.Z) time.Time {
	if len(zs) == 0 {
		return time.Time{}
	}
	id, _ := zs[0].Member.(string)
	if _, due, ok := driver.ParseOccurrenceID(id); ok {
		return due
	}
	return time.UnixMicro(int64(zs[0].Score))
}

// Cursors reads the cursors of names in one pipeline (driver.Coordination).
func (d *Driver) Cursors(ctx context.Context, names []string) ([]time.Time, error) {
	pipe := d.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(names))
	for i, name := range names {
		cmds[i] = pipe.HGet(ctx, d.cursorKey(name), "stored")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]time.Time, len(names))
	for i, c := range cmds {
		if v, err := c.Result(); err == nil {
			us, err := parseMicros(v)
			if err != nil {
				return nil, err
			}
			out[i] = time.UnixMicro(us)
		}
	}
	return out, nil
}

// WriteCursors runs CursorScript for each cursor, in one pipeline
// (driver.Coordination).
func (d *Driver) WriteCursors(ctx context.Context, cursors []driver.Cursor) error {
	calls := make([]*scriptCall, len(cursors))
	for i, c := range cursors {
		calls[i] = &scriptCall{keys: []string{d.cursorKey(c.Name)},
			args: []any{microsText(c.Stored), c.Misfire, boolText(c.Overlap)}}
	}
	cmds, err := d.runPipelined(ctx, CursorScript, calls)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}
