package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The actions on one task: run now, retry, reschedule, cancel, delete
// (asynq task run / archive / delete / cancel, River's JobRetry,
// JobCancel, JobDelete). Each is one call of the cluster module, which
// checks the task's state and changes it in one step; a refusal (no such
// task, wrong state) is printed as the module gives it, with exit status 1.

// actionJSON is the document of run, retry, reschedule and delete.
type actionJSON struct {
	// ID is the task acted on.
	ID string `json:"id"`
	// Action is "run", "retry", "reschedule" or "delete".
	Action string `json:"action"`
	// Due is the new due time (reschedule only).
	Due *time.Time `json:"due,omitempty"`
}

// cancelJSON is cancel's document.
type cancelJSON struct {
	ID string `json:"id"`
	// Removed is true: a task was stored under the ID and is now removed
	// (when none was, cancel fails with reason "not_found").
	Removed bool `json:"removed"`
	// WasRunning is true if a run was in flight; its ctx is canceled.
	WasRunning bool `json:"was_running"`
}

// simpleAction is a command that takes an ID and calls act on it.
func simpleAction(name, summary, done string, act func(n *cluster.Node, ctx context.Context, id string) error) *command {
	return &command{
		name:    name,
		summary: summary,
		args:    []string{"ID"},
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, args []string) error {
				id := args[0]
				if err := act(s.node, ctx, id); err != nil {
					return err
				}
				if s.json {
					writeJSON(s.stdout, actionJSON{ID: id, Action: name})
				} else {
					fmt.Fprintf(s.stdout, "%s: %s\n", cell(id), done)
				}
				return nil
			}
		},
	}
}

func runCommand() *command {
	return simpleAction("run", "make a pending task due at once (keeps its due time)", "due now",
		(*cluster.Node).RunNow)
}

func retryCommand() *command {
	return simpleAction("retry", "give a dead task its retries again, due at once", "retrying, due now",
		(*cluster.Node).Retry)
}

func deleteCommand() *command {
	return simpleAction("delete", "remove a dead task or a done record", "deleted",
		(*cluster.Node).Delete)
}

func rescheduleCommand() *command {
	return &command{
		name:     "reschedule",
		summary:  "move a pending task to TIME: RFC 3339, or a duration from now (10m, +2h, 1d)",
		args:     []string{"ID", "TIME"},
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, args []string) error {
				id := args[0]
				due, err := parseFutureTime(args[1], time.Now())
				if err != nil {
					return err
				}
				if err := s.node.Reschedule(ctx, id, due); err != nil {
					return err
				}
				if s.json {
					utc := due.UTC().Truncate(time.Microsecond)
					writeJSON(s.stdout, actionJSON{ID: id, Action: "reschedule", Due: &utc})
				} else {
					fmt.Fprintf(s.stdout, "%s: due %s\n", cell(id), formatTime(due, time.Now()))
				}
				return nil
			}
		},
	}
}

func cancelCommand() *command {
	return &command{
		name:    "cancel",
		summary: "remove a task in any state, stopping a run in flight",
		args:    []string{"ID"},
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, args []string) error {
				id := args[0]
				c, err := s.node.Cancel(ctx, id)
				if err != nil {
					return err
				}
				if !c.Removed {
					return refused(cluster.ErrNotFound, "no such task")
				}
				if s.json {
					writeJSON(s.stdout, cancelJSON{ID: id, Removed: c.Removed, WasRunning: c.WasRunning})
					return nil
				}
				if c.WasRunning {
					fmt.Fprintf(s.stdout, "%s: canceled; its run in flight is told to stop\n", cell(id))
				} else {
					fmt.Fprintf(s.stdout, "%s: canceled\n", cell(id))
				}
				return nil
			}
		},
	}
}
