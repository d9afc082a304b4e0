package main

import (
	"context"
	"flag"
	"fmt"
)

// stpectl counts: how many tasks each state holds (asynq queue inspect).

// countsJSON is counts' document.
type countsJSON struct {
	Pending int64 `json:"pending"`
	Running int64 `json:"running"`
	Dead    int64 `json:"dead"`
}

func countsCommand() *command {
	return &command{
		name:    "counts",
		summary: "count the tasks in each state",
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, _ []string) error {
				c, err := s.node.Counts(ctx)
				if err != nil {
					return err
				}
				if s.json {
					writeJSON(s.stdout, countsJSON{Pending: c.Pending, Running: c.Running, Dead: c.Dead})
					return nil
				}
				fmt.Fprintf(s.stdout, "pending  %d\nrunning  %d\ndead     %d\n", c.Pending, c.Running, c.Dead)
				return nil
			}
		},
	}
}
