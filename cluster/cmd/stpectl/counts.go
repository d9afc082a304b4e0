package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl counts: how many tasks each state holds, in total and by kind,
// and which kinds are paused (asynq queue ls and queue inspect).

// countsJSON is how many tasks each state holds.
type countsJSON struct {
	Pending int64 `json:"pending"`
	Running int64 `json:"running"`
	Dead    int64 `json:"dead"`
	// Done counts done records, kept only by nodes made WithKeepDone.
	Done int64 `json:"done"`
}

func newCountsJSON(c cluster.Counts) countsJSON {
	return countsJSON{Pending: c.Pending, Running: c.Running, Dead: c.Dead, Done: c.Done}
}

// kindCountsJSON is one kind's counts.
type kindCountsJSON struct {
	Kind string `json:"kind"`
	countsJSON
	Paused bool `json:"paused"`
}

// countsDocJSON is counts' document: the totals, then each kind that has
// tasks or is paused, sorted by kind.
type countsDocJSON struct {
	countsJSON
	Kinds []kindCountsJSON `json:"kinds"`
}

func countsCommand() *command {
	return &command{
		name:    "counts",
		summary: "count the tasks in each state, in total and by kind, and show the paused kinds",
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, _ []string) error {
				total, kinds, err := s.node.CountsByKind(ctx)
				if err != nil {
					return err
				}
				if s.json {
					doc := countsDocJSON{countsJSON: newCountsJSON(total), Kinds: make([]kindCountsJSON, 0, len(kinds))}
					for _, k := range kinds {
						doc.Kinds = append(doc.Kinds, kindCountsJSON{Kind: k.Kind, countsJSON: newCountsJSON(k.Counts), Paused: k.Paused})
					}
					writeJSON(s.stdout, doc)
					return nil
				}
				tw := tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "KIND\tPENDING\tRUNNING\tDEAD\tDONE\t")
				for _, k := range kinds {
					paused := ""
					if k.Paused {
						paused = "paused"
					}
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", cell(k.Kind), k.Pending, k.Running, k.Dead, k.Done, paused)
				}
				fmt.Fprintf(tw, "(all)\t%d\t%d\t%d\t%d\t\n", total.Pending, total.Running, total.Dead, total.Done)
				return tw.Flush()
			}
		},
	}
}
