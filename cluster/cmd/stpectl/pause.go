package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl pause KIND and resume KIND: stop every node from starting tasks
// of a kind, and let them again (asynq queue pause and queue unpause,
// River's QueuePause and QueueResume). Paused tasks stay pending with their
// due times; running ones finish. counts shows which kinds are paused.

// pauseJSON is the document of pause and resume.
type pauseJSON struct {
	Kind string `json:"kind"`
	// Paused is true after pause, false after resume.
	Paused bool `json:"paused"`
}

func pauseCommand() *command {
	return pauseOrResume("pause", "stop every node from starting tasks of KIND (they stay pending)", true, (*cluster.Node).Pause)
}

func resumeCommand() *command {
	return pauseOrResume("resume", "let the nodes start the tasks of a paused KIND again", false, (*cluster.Node).Resume)
}

func pauseOrResume(name, summary string, paused bool, act func(*cluster.Node, context.Context, string) error) *command {
	return &command{
		name:    name,
		summary: summary,
		args:    []string{"KIND"},
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, args []string) error {
				kind := args[0]
				if err := act(s.node, ctx, kind); err != nil {
					return err
				}
				if s.json {
					writeJSON(s.stdout, pauseJSON{Kind: kind, Paused: paused})
					return nil
				}
				state := "resumed"
				if paused {
					state = "paused"
				}
				fmt.Fprintf(s.stdout, "%s: %s\n", cell(kind), state)
				return nil
			}
		},
	}
}
