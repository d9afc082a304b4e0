package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The periodic registry: every started node writes the periodic tasks it
// declares (prefix:periodic:<name>, indexed by prefix:periodic) with its
// membership renewal, so the declaration lives as long as one of its
// declaring nodes does and expires a lease after the last one stopped
// renewing it. After each run of an occurrence the node that ran it
// records that run there. Node.PeriodicTasks lists them: asynq's
// Inspector.SchedulerEntries (written by its PeriodicTaskManager), River's
// periodic jobs as its leader sees them.

// PeriodicInfo is one declared periodic task as the registry shows it.
type PeriodicInfo struct {
	// Name is the name given to Node.Periodic; its occurrences' kind is
	// "@" + Name.
	Name string
	// Trigger describes the trigger: its String() if it has one (a
	// *cron.Schedule gives its spec), else its Go type.
	Trigger string
	// Next is the due time of the occurrence that runs next (its ID is
	// OccurrenceID(Name, Next)): of the occurrences stored, the one the
	// misfire policy runs next (under MisfireCoalesce the latest that is
	// due, else the first to come; under MisfireSkip the first not yet
	// missed; under MisfireRunEach the first). If none is stored, the
	// trigger's next time after the last renewal; the zero Time if the
	// trigger has no more.
	Next time.Time
	// Misfire and Overlap are the task's settings (WithMisfire,
	// WithOverlap) as its declaring nodes last stored them.
	Misfire Misfire
	Overlap bool
	// Nodes are the names of the live nodes declaring it (Node.Name),
	// sorted.
	Nodes []string
	// LastRun is the last run of an occurrence recorded while the
	// declaration lived, or nil if none.
	LastRun *PeriodicRun
}

// PeriodicRun is one run of a periodic task's occurrence.
type PeriodicRun struct {
	// Node is the name of the node that ran it (Node.Name).
	Node string
	// Due is the occurrence's due time (its Task.Due).
	Due time.Time
	// Started and Ended are when the handler was called and when its
	// outcome was recorded, by the running node's clock corrected by its
	// offset from Redis's.
	Started, Ended time.Time
	// Outcome is how the run ended, as Observer.Ended reports it:
	// OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut, OutcomeLost
	// (its lease was lost, its outcome could not be written, or StopNow
	// left it to its lease), OutcomeCanceled or OutcomeHandedBack.
	Outcome Outcome
	// Error is the handler's error, or "" for a completed run.
	Error string
}

// recordedOutcome is the outcome of a run whose outcome out was written
// with the script's answer res: "lost" (the node no longer held the task)
// or "" (nothing could be written) loses the run.
func recordedOutcome(out Outcome, res string) Outcome {
	if res == "lost" || res == "" {
		return OutcomeLost
	}
	return out
}

// storedOccurrence is what the store holds of a periodic task's
// occurrences: its settings, if a node stored them, and the due time of
// the occurrence that runs next (zero if none is stored).
type storedOccurrence struct {
	found   bool
	misfire Misfire
	overlap bool
	next    time.Time
}

// storedNext reads, in one pipeline, the stored settings and pending
// occurrences of the periodic tasks names, and picks for each the
// occurrence that runs next by its misfire policy at now.
func (s store) storedNext(ctx context.Context, names []string, now time.Time) (map[string]storedOccurrence, error) {
	type read struct {
		settings                *redis.SliceCmd
		first, overdue, onwards *redis.ZSliceCmd
	}
	nowText := strconv.FormatInt(now.UnixMicro(), 10)
	pipe := s.rdb.Pipeline()
	reads := make([]read, len(names))
	for i, name := range names {
		ix := s.parts[periodicPartition(name, len(s.parts))].KindIndex(string(Pending), periodicKind(name))
		reads[i] = read{
			settings: pipe.HMGet(ctx, s.cursorKey(name), "misfire", "overlap"),
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
	out := make(map[string]storedOccurrence, len(names))
	for i, name := range names {
		r := reads[i]
		var so storedOccurrence
		if v := r.settings.Val(); len(v) == 2 {
			text, _ := v[0].(string)
			so.misfire, so.found = misfireOf(text)
			so.overlap = v[1] == "1"
		}
		first, overdue, onwards := firstTime(r.first.Val()), firstTime(r.overdue.Val()), firstTime(r.onwards.Val())
		switch {
		case so.misfire == MisfireRunEach:
			so.next = first
		case overdue.IsZero():
			so.next = onwards
		case so.misfire == MisfireSkip && now.Sub(overdue) > threshold(overdue, onwards):
			so.next = onwards
		default:
			so.next = overdue
		}
		out[name] = so
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
	if _, due, ok := parseOccurrenceID(id); ok {
		return due
	}
	return time.UnixMicro(int64(zs[0].Score))
}

func (s store) periodicPrefix() string { return s.keys().PeriodicPrefix() }
func (s store) periodicIndex() string  { return s.keys().Periodic() }

// periodicDecl is a periodic task as a node declares it in the registry.
type periodicDecl struct {
	name, trigger string
	next          string // µs, or "" when the trigger has no more times
}

// declarations returns the declarations of ps at now.
func declarations(ps []*periodic, now time.Time) []periodicDecl {
	out := make([]periodicDecl, 0, len(ps))
	for _, p := range ps {
		out = append(out, periodicDecl{name: p.name, trigger: triggerText(p), next: microsText(p.next(now))})
	}
	return out
}

// triggerText describes p's trigger: its String() if it has one, else its
// Go type.
func triggerText(p *periodic) string {
	if s, ok := p.trig.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", p.trig)
}

// microsText writes t in the store's unit, "" for the zero Time.
func microsText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMicro(), 10)
}

// PeriodicTasks lists the periodic tasks declared by live nodes of the
// prefix, sorted by name, with the last run of each, from any node,
// started or not.
func (n *Node) PeriodicTasks(ctx context.Context) ([]PeriodicInfo, error) {
	recs, err := n.st.records(ctx, n.st.periodicIndex(), n.st.periodicPrefix())
	if err != nil {
		return nil, failed("periodic tasks", err)
	}
	members, err := n.Members(ctx)
	if err != nil {
		return nil, failed("periodic tasks", err)
	}
	names := make([]string, 0, len(recs))
	for name := range recs {
		names = append(names, name)
	}
	stored, err := n.st.storedNext(ctx, names, n.now())
	if err != nil {
		return nil, failed("periodic tasks", err)
	}
	out := make([]PeriodicInfo, 0, len(recs))
	for _, name := range names {
		f := recs[name]
		p := PeriodicInfo{Name: name, Trigger: f["trigger"], Next: timeField(f["next"]), Nodes: []string{}}
		if s := stored[name]; s.found {
			p.Misfire, p.Overlap = s.misfire, s.overlap
			if !s.next.IsZero() {
				p.Next = s.next
			}
		}
		for _, m := range members {
			if slices.Contains(m.Kinds, periodicKind(name)) {
				p.Nodes = append(p.Nodes, m.Name)
			}
		}
		if f["last_node"] != "" {
			p.LastRun = &PeriodicRun{
				Node:    f["last_node"],
				Due:     timeField(f["last_due"]),
				Started: timeField(f["last_started"]),
				Ended:   timeField(f["last_ended"]),
				Outcome: Outcome(f["last_outcome"]),
				Error:   f["last_error"],
			}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b PeriodicInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// notePeriodicRun announces that a run of an occurrence of a periodic
// task ended (publishEnded: an occurrence waiting for it may start) and
// records it in the registry; a failure to write is logged, and the run is
// not affected.
func (n *Node) notePeriodicRun(c claimResult, started time.Time, outcome Outcome, runErr error) {
	name, ok := strings.CutPrefix(c.kind, "@")
	if !ok {
		return
	}
	if n.periodicOf(c.kind) == nil {
		return
	}
	ended := n.now()
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.lease/4)
	defer cancel()
	if err := n.st.publishEnded(ctx, name, c.kind); err != nil {
		n.cfg.logger.Warn("cluster: periodic: announcing the end of a run failed", "name", name, "err", err)
	}
	err := redisdriver.PeriodicRunScript.Run(ctx, n.st.rdb, []string{n.st.periodicPrefix() + name},
		n.name, strconv.FormatInt(c.due, 10), microsText(started), microsText(ended), string(outcome), msg).Err()
	if err != nil {
		n.cfg.logger.Warn("cluster: periodic: recording a run failed", "name", name, "err", err)
	}
}
