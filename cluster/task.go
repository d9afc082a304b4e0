package cluster

import (
	"context"
	"time"
)

// Handler runs one task. Returning nil completes the task; an error, a
// panic or passing its time limit (WithTaskTimeout) fails the run, which is retried with backoff up to the retry limit
// and then kept as dead with the error's text. ctx is canceled when the
// node stops (Node.Stop past its deadline, Node.StopNow), the run's lease
// is lost, the task is canceled or its time limit passes; a handler should return promptly then. It is asynq's
// Handler.ProcessTask, River's Worker.Work and Quartz's Job.execute.
//
// Delivery is at least once: a handler may see a task again after a crash,
// so it should be idempotent (the ID is stable across retries).
type Handler func(ctx context.Context, t Task) error

// Task is a task as its handler sees it.
type Task struct {
	// ID names the task: random, or the caller's (WithID), or
	// name@due for a periodic occurrence.
	ID string
	// Kind selects the handler; for a periodic task it is "@" + name.
	Kind string
	// Payload is the caller's data, as given to Schedule.
	Payload []byte
	// Due is the time the task was scheduled for (for a periodic task,
	// its occurrence time). A retry runs later than Due.
	Due time.Time
	// Attempt counts the earlier runs that failed (an error, a panic or
	// the time limit): the retries used up (0 on the first run).
	Attempt int
	// Lost counts the earlier runs lost to a fault: their lease expired
	// because their node died, stalled or lost Redis, or their outcome
	// could not be written. They do not use up the retries.
	Lost int
}
