package scheduler

import (
	"context"
	"time"
)

// The context a run is given, and the interrupt that cancels it (the Go
// stand-in for Thread.interrupt; JDK FutureTask.cancel(true)).

// interrupt cancels the task's run context, now or as soon as it is made.
func (t *futureTask) interrupt() {
	t.state.Or(interruptedBit)
	if a := t.aux.Load(); a != nil {
		a.mu.Lock()
		if a.cancel != nil {
			a.cancel()
		}
		a.mu.Unlock()
	}
}

// runContext returns the ctx a run is given. It is the task itself seen as
// a context.Context, so a run costs no allocation; the real cancelable
// context is made only when the run first asks for Done, Err or Value.
func (t *futureTask) runContext() context.Context { return (*runCtx)(t) }

// runCtx is a task seen as the context.Context of its runs. Its Value
// forwards to the lazily made cancel context, so context.WithCancel(ctx)
// and friends attach to it directly, without a goroutine.
type runCtx futureTask

func (c *runCtx) ctx() context.Context {
	t := (*futureTask)(c)
	a := t.getAux()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx == nil {
		a.ctx, a.cancel = context.WithCancel(t.s.baseCtx)
		// interrupt sets the bit before it looks for a.cancel, so an
		// interrupt that found no context is seen here.
		if t.state.Load()&interruptedBit != 0 {
			a.cancel()
		}
	}
	return a.ctx
}

// Deadline implements context.Context: runs have no deadline.
func (c *runCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done implements context.Context.
func (c *runCtx) Done() <-chan struct{} { return c.ctx().Done() }

// Err implements context.Context.
func (c *runCtx) Err() error { return c.ctx().Err() }

// Value implements context.Context: the task itself for CurrentRun's key,
// else the values of the base context (WithBaseContext).
func (c *runCtx) Value(key any) any {
	if _, ok := key.(currentRunKey); ok {
		return (*futureTask)(c)
	}
	return c.ctx().Value(key)
}

// String names the context for debugging.
func (c *runCtx) String() string { return "scheduler.runContext(" + (*futureTask)(c).logName() + ")" }
