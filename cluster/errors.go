package cluster

import "errors"

// ErrIDConflict is wrapped (together with scheduler.ErrInvalidArgument) by
// the error of Node.Schedule when the caller's ID already names a different
// task (another kind, payload or due time), stored or run within the
// retention. The stored task is left as it was. asynq's counterpart is
// ErrTaskIDConflict; Quartz's is ObjectAlreadyExistsException.
var ErrIDConflict = errors.New("cluster: task ID already used by a different task")

// ErrStopped is wrapped by the error of Node.Start on a node already
// started or stopped; a Node runs once, like a scheduler.Scheduler.
var ErrStopped = errors.New("cluster: node already started or stopped")

// errLeaseLost is the cause a run's ctx is canceled with when its lease was
// taken away (it expired, or the task was canceled).
var errLeaseLost = errors.New("cluster: lease lost (it expired, or the task was canceled)")

// errHandBack is the cause a run's ctx is canceled with when Node.Stop's ctx
// ends before the run: the task is handed back to pending.
var errHandBack = errors.New("cluster: node stopping, task handed back")

// errKilled is the cause a run's ctx is canceled with by Node.StopNow: the
// task is left to its lease.
var errKilled = errors.New("cluster: node stopped now, task left to its lease")
