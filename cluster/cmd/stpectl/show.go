package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl show ID: one stored task in full (asynq task inspect, River's
// JobGet): its payload shown safely, its counts of failed and lost runs,
// the node running it, its last error with the stack of a panic, and its
// last runs.

func showCommand() *command {
	return &command{
		name:     "show",
		synopsis: "[-full]",
		summary:  "show a task: payload, attempts, lease owner, last error with its stack, run history",
		args:     []string{"ID"},
		define: func(fs *flag.FlagSet) runFunc {
			full := fs.Bool("full", false, "the whole payload (else cut at "+strconv.Itoa(payloadLimit)+" bytes)")
			return func(ctx context.Context, s *session, args []string) error {
				id := args[0]
				info, ok, err := s.node.Get(ctx, id)
				if err != nil {
					return err
				}
				if !ok {
					return refused(cluster.ErrNotFound, "no such task")
				}
				if s.json {
					writeJSON(s.stdout, newTaskJSON(info, payloadCut(*full)))
					return nil
				}
				printTask(s, info, payloadCut(*full))
				return nil
			}
		},
	}
}

// printTask writes info as labelled lines, the payload and the last error
// indented below.
func printTask(s *session, info cluster.Info, limit int) {
	now := time.Now()
	w := s.stdout
	fmt.Fprintf(w, "ID:          %s\n", cell(info.ID))
	fmt.Fprintf(w, "Kind:        %s\n", cell(info.Kind))
	state := string(info.State)
	if info.Retrying {
		state += " (retrying: it failed or was lost before)"
	}
	if info.Paused {
		state += " (its kind is paused)"
	}
	fmt.Fprintf(w, "State:       %s\n", state)
	fmt.Fprintf(w, "Due:         %s\n", formatTime(info.Due, now))
	if info.Owner != "" {
		fmt.Fprintf(w, "Owner:       %s, claimed %s\n", cell(info.Owner), formatTime(info.Started, now))
	}
	if !info.Finished.IsZero() {
		fmt.Fprintf(w, "Finished:    %s\n", formatTime(info.Finished, now))
	}
	fmt.Fprintf(w, "Failed runs: %d (retry limit %d%s)\n", info.Attempt, info.MaxRetries, retriesLeft(info))
	fmt.Fprintf(w, "Lost runs:   %d (lost to faults: a node died or lost Redis; they use no retry)\n", info.Lost)
	v := viewPayload(info.Payload, limit)
	fmt.Fprintf(w, "Payload:     %d bytes (%s)\n", v.size, v.note())
	indent(w, v.block())
	if info.LastError == "" {
		fmt.Fprintln(w, "Last error:  -")
	} else {
		fmt.Fprintln(w, "Last error:")
		e := viewPayload([]byte(info.LastError), -1)
		if e.text {
			indent(w, info.LastError)
		} else {
			indent(w, strconv.Quote(info.LastError))
		}
	}
	printHistory(w, info.History, now)
}

// printHistory writes a task's last runs as an indented table.
func printHistory(w io.Writer, runs []cluster.RunRecord, now time.Time) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "History:     -")
		return
	}
	fmt.Fprintf(w, "History:     last %d run(s), oldest first\n", len(runs))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "    START\tTOOK\tNODE\tOUTCOME\tERROR")
	for _, r := range runs {
		node := "-"
		if r.Node != "" {
			node = cell(r.Node)
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", formatTime(r.Start, now), r.End.Sub(r.Start).Round(time.Millisecond),
			node, r.Outcome, firstLine(r.Error, 60))
	}
	_ = tw.Flush()
}

// indent writes each line of text indented by four spaces.
func indent(w io.Writer, text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}
