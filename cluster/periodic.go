package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/go-stpe/scheduler"
)

// Cluster-once periodic tasks. Every node that declares a periodic task
// computes the same occurrences from its Trigger (calendar times do not
// depend on whose clock computes them) and stores each one as an ordinary
// durable task whose ID is name@due: the due time is part of the identity.
// Storing is idempotent, so every node may do it and no leader is needed;
// a done marker kept for the retention stops an occurrence that already
// ran from being stored again by a node whose clock is behind. One node
// claims the occurrence at its due time; if that node dies, the lease
// returns it and another runs it.

// maxOccurrencesPerSweep bounds how many occurrences of one periodic task a
// sweep stores, for triggers much finer than the window.
const maxOccurrencesPerSweep = 1000

// periodic is one declared periodic task.
type periodic struct {
	name string
	trig scheduler.Trigger
	// trigMu serializes the calls of trig.Next: the sweep stores the
	// occurrences, the membership renewal and the runs write the next
	// time to the registry, and a Trigger need not be safe for
	// concurrent use.
	trigMu sync.Mutex
	// last is the latest occurrence stored by this node; only the sweep
	// loop reads and writes it.
	last time.Time
}

// Periodic declares a cluster-once periodic task (Quartz's clustered
// CronTrigger, ShedLock's @SchedulerLock, asynq's PeriodicTaskManager but
// without its single process): every node declaring name with the same
// trigger runs h once per due time across all of them. The trigger's
// occurrences within the window are stored on each sweep, so they survive
// a restart; occurrences that fell while no node was running are not made
// up (Quartz's misfire "do nothing"). A failed run is retried with backoff
// like any task, and may then overlap the next occurrence.
//
// While the node runs, the declaration (name, trigger, next time) and the
// last run of an occurrence are kept in Redis for Node.PeriodicTasks.
//
// Declare it before Start. A nil trigger or handler, a name with white
// space or longer than 200 bytes, a name already declared, a nil option or
// a negative time limit is an error wrapping scheduler.ErrInvalidArgument.
// WithTaskTimeout sets the time limit of its runs.
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
	n.periodics = append(n.periodics, &periodic{name: name, trig: trig})
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
func OccurrenceID(name string, due time.Time) string {
	return name + "@" + due.UTC().Format(time.RFC3339Nano)
}

// createOccurrences stores the occurrences of every periodic task due
// within the window that this node has not stored yet.
func (n *Node) createOccurrences(ctx context.Context) {
	n.mu.Lock()
	ps := append([]*periodic(nil), n.periodics...)
	now := n.nowLocked()
	n.mu.Unlock()
	until := now.Add(n.cfg.window)
	for _, p := range ps {
		from := p.last
		if from.IsZero() {
			from = now
		}
		for range maxOccurrencesPerSweep {
			due := p.next(from)
			if due.IsZero() || due.After(until) {
				break
			}
			sc := scheduleConfig{id: OccurrenceID(p.name, due), maxRetries: n.cfg.maxRetries}
			if _, err := n.store(ctx, periodicKind(p.name), nil, due, sc); err != nil {
				if ctx.Err() == nil {
					n.cfg.logger.Warn("cluster: periodic: storing an occurrence failed", "name", p.name, "due", due, "err", err)
				}
				break // tried again on the next sweep
			}
			p.last, from = due, due
		}
	}
}
