package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The periodic registry: every started node writes the periodic tasks it
// declares with its membership renewal (driver.Coordination's Renew), so
// the declaration lives as long as one of its declaring nodes does and
// expires a lease after the last one stopped renewing it. After each run of an occurrence the node that ran it
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

// PeriodicRun is one run of a periodic task's occurrence (see
// driver.PeriodicRun for its fields).
type PeriodicRun = driver.PeriodicRun

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

// storedNext reads the stored settings and pending occurrences of the
// periodic tasks names, and picks for each the occurrence that runs next
// by its misfire policy at now: under MisfireRunEach the first, else the
// latest that is due (under MisfireSkip only if it is not past its
// threshold), else the first to come.
func (n *Node) storedNext(ctx context.Context, names []string, now time.Time) (map[string]storedOccurrence, error) {
	states, err := n.drv.PeriodicStates(ctx, names, now)
	if err != nil {
		return nil, err
	}
	out := make(map[string]storedOccurrence, len(names))
	for _, name := range names {
		st := states[name]
		var so storedOccurrence
		if st.Found {
			so.misfire, so.found = misfireOf(st.Misfire)
			so.overlap = st.Overlap
		}
		switch {
		case so.misfire == MisfireRunEach:
			so.next = st.First
		case st.Overdue.IsZero():
			so.next = st.Onwards
		case so.misfire == MisfireSkip && now.Sub(st.Overdue) > threshold(st.Overdue, st.Onwards):
			so.next = st.Onwards
		default:
			so.next = st.Overdue
		}
		out[name] = so
	}
	return out, nil
}

// declarations returns the declarations of ps at now.
func declarations(ps []*periodic, now time.Time) []driver.PeriodicDeclaration {
	out := make([]driver.PeriodicDeclaration, 0, len(ps))
	for _, p := range ps {
		out = append(out, driver.PeriodicDeclaration{Name: p.name, Trigger: triggerText(p), Next: p.next(now)})
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

// PeriodicTasks lists the periodic tasks declared by live nodes of the
// prefix, sorted by name, with the last run of each, from any node,
// started or not.
func (n *Node) PeriodicTasks(ctx context.Context) ([]PeriodicInfo, error) {
	decls, err := n.drv.PeriodicDeclarations(ctx)
	if err != nil {
		return nil, failed("periodic tasks", err)
	}
	members, err := n.Members(ctx)
	if err != nil {
		return nil, failed("periodic tasks", err)
	}
	names := make([]string, 0, len(decls))
	for _, d := range decls {
		names = append(names, d.Name)
	}
	stored, err := n.storedNext(ctx, names, n.now())
	if err != nil {
		return nil, failed("periodic tasks", err)
	}
	out := make([]PeriodicInfo, 0, len(decls))
	for _, d := range decls {
		name := d.Name
		p := PeriodicInfo{Name: name, Trigger: d.Trigger, Next: d.Next, Nodes: []string{}, LastRun: d.LastRun}
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
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b PeriodicInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// notePeriodicRun announces that a run of an occurrence of a periodic
// task ended (AnnounceEnded: an occurrence waiting for it may start) and
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
	if err := n.drv.AnnounceEnded(ctx, name); err != nil {
		n.cfg.logger.Warn("cluster: periodic: announcing the end of a run failed", "name", name, "err", err)
	}
	err := n.drv.RecordPeriodicRun(ctx, name, PeriodicRun{Node: n.name, Due: time.UnixMicro(c.due),
		Started: started, Ended: ended, Outcome: outcome, Error: msg})
	if err != nil {
		n.cfg.logger.Warn("cluster: periodic: recording a run failed", "name", name, "err", err)
	}
}
