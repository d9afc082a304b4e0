package cluster

import (
	"github.com/go-stpe/scheduler/cluster/driver"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler"
)

// Cluster-once periodic tasks. Every node that declares a periodic task
// computes the same occurrences from its Trigger (calendar times do not
// depend on whose clock computes them) and stores each one as an ordinary
// durable task whose ID is name@due: the due time is part of the identity.
// Storing is idempotent, so every node may do it and no leader is needed;
// a done marker kept for the retention stops an occurrence that already
// ran, or was skipped, from being stored again by a node whose clock is
// behind. Every occurrence of one periodic task is stored in the partition
// of its name, beside its cursor (the latest occurrence stored), so that
// the claim of one sees the others: it applies the misfire policy and
// keeps occurrences from overlapping (misfire.go). One node claims the
// occurrence at its due time; if that node dies, the lease returns it and
// another runs it.

// maxOccurrencesPerSweep bounds how many occurrences of one periodic task a
// sweep stores, for triggers much finer than the window.
const maxOccurrencesPerSweep = 1000

// maxTriggerSteps bounds how many of a trigger's times one sweep walks
// through, storing none, from the cursor to now: the next sweep goes on
// from where it stopped.
const maxTriggerSteps = 100_000

// periodic is one declared periodic task.
type periodic struct {
	name string
	trig scheduler.Trigger
	cfg  periodicConfig
	// trigMu serializes the calls of trig.Next: the sweep stores the
	// occurrences, the membership renewal writes the next time to the
	// registry, and the claims ask for the time after an occurrence; a
	// Trigger need not be safe for concurrent use.
	trigMu sync.Mutex
	// last is the latest occurrence this node stored or passed over;
	// only the sweep loop reads and writes it.
	last time.Time
	// ended counts the "ended" notices heard for the task: a claim that
	// found an occurrence waiting tries again at once if one came in
	// meanwhile.
	ended atomic.Uint64
}

// Periodic declares a cluster-once periodic task (Quartz's clustered
// CronTrigger, ShedLock's @SchedulerLock, asynq's PeriodicTaskManager but
// without its single process): every node declaring name with the same
// trigger runs h once per due time across all of them. The trigger's
// occurrences within the window are stored on each sweep, so they survive
// a restart.
//
// Occurrences never burst. Those that are overdue together, after a
// Pause, while every node was down or cut off from Redis, or while the
// previous run went on, follow the misfire policy (WithMisfire): by
// default they coalesce into one run, the latest due, and the runs go on
// at the trigger's times after it (MisfireCoalesce); MisfireSkip runs none
// of them, MisfireRunEach runs each, one after another, in order. Two
// occurrences never run at once anywhere in the cluster unless
// WithOverlap(true): the next is claimed only after the running one
// ended. The claim script decides both by Redis's clock, so nodes never
// decide differently. A failed run is retried with backoff like any task
// (its retries are not occurrences: no misfire policy applies to them),
// and its retry too waits for a running occurrence.
//
// While the node runs, the declaration (name, trigger) and the last run of
// an occurrence are kept in Redis for Node.PeriodicTasks.
//
// Declare it before Start. A nil trigger or handler, a name with white
// space or longer than 200 bytes, a name already declared, a nil option,
// an unknown misfire policy or a negative time limit is an error wrapping
// scheduler.ErrInvalidArgument. WithTaskTimeout sets the time limit of its
// runs.
func (n *Node) Periodic(name string, trig scheduler.Trigger, h Handler, opts ...HandleOption) error {
	what := "periodic " + name
	if err := validKind(name); err != nil {
		return err
	}
	if trig == nil {
		return invalid(what, "nil trigger")
	}
	kh, err := newKindHandler(what, h, opts)
	if err != nil {
		return err
	}
	pc := periodicSettings(opts)
	if err := validPeriodicConfig(what, pc); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != stateNew {
		return invalid(what, "declared after Start")
	}
	kind := periodicKind(name)
	if _, dup := n.handlers[kind]; dup {
		return invalid(what, "already declared")
	}
	n.handlers[kind] = kh
	n.weighted = n.weighted || kh.weight > 0
	n.periodics = append(n.periodics, &periodic{name: name, trig: trig, cfg: pc})
	return nil
}

// next returns the trigger's first time after t.
func (p *periodic) next(t time.Time) time.Time {
	p.trigMu.Lock()
	defer p.trigMu.Unlock()
	return p.trig.Next(t)
}

// periodicKind is the kind of a periodic task's occurrences.
func periodicKind(name string) string { return "@" + name }

// OccurrenceID is the ID of the occurrence of periodic task name due at due:
// name@due in UTC, RFC 3339 with nanoseconds. Cancel it to skip one run.
func OccurrenceID(name string, due time.Time) string { return driver.OccurrenceID(name, due) }

// parseOccurrenceID splits an ID shaped as OccurrenceID writes it into the
// name and the due time; ok is false for any other ID.
func parseOccurrenceID(id string) (name string, due time.Time, ok bool) {
	return driver.ParseOccurrenceID(id)
}

// periodicSettings are the periodic settings opts give (nil options are
// refused by newKindHandler).
func periodicSettings(opts []HandleOption) periodicConfig {
	var hc handleConfig
	for _, o := range opts {
		if o != nil {
			o.applyHandle(&hc)
		}
	}
	return hc.periodic
}

// periodicOf is the declared periodic task whose occurrences are of kind,
// or nil.
func (n *Node) periodicOf(kind string) *periodic {
	name, ok := strings.CutPrefix(kind, "@")
	if !ok {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.periodics {
		if p.name == name {
			return p
		}
	}
	return nil
}
