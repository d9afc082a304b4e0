package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl show ID: one stored task in full (asynq task inspect, River's
// JobGet): its payload shown safely, its counts of failed and lost runs,
// its last error with the stack of a panic.

func showCommand() *command {
	return &command{
		name:     "show",
		synopsis: "[-full] ID",
		summary:  "show a task: payload, attempts, last error with its stack",
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
					return refused(cluster.ErrNotFound, "show %s: no such task (never stored, canceled, deleted or run to completion)", id)
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
	fmt.Fprintf(w, "State:       %s\n", info.State)
	fmt.Fprintf(w, "Due:         %s\n", formatTime(info.Due, now))
	fmt.Fprintf(w, "Attempts:    %d failed of %d retries allowed, %d lost to faults\n", info.Attempt, info.MaxRetries, info.Lost)
	v := viewPayload(info.Payload, limit)
	how := "text"
	if !v.text {
		how = "binary, hex"
	}
	if v.truncated {
		how += fmt.Sprintf(", first %d bytes; -full for all", len(v.shown))
	}
	fmt.Fprintf(w, "Payload:     %d bytes (%s)\n", v.size, how)
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
}

// indent writes each line of text indented by four spaces.
func indent(w interface{ Write([]byte) (int, error) }, text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}
