package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl list: a page of the tasks in one state, of every kind or of one
// (asynq task ls, River's JobList), with the cursor of the next page.

// defaultPage is list's page size unless -limit says otherwise.
const defaultPage = 50

// listJSON is list's document.
type listJSON struct {
	State string `json:"state"`
	// Kind is the kind listed, "" for every kind.
	Kind  string     `json:"kind"`
	Tasks []taskJSON `json:"tasks"`
	// Next is the -cursor of the following page, "" after the last.
	Next string `json:"next"`
}

func listCommand() *command {
	return &command{
		name:     "list",
		synopsis: "[-state pending|running|dead|done] [-kind K] [-limit N] [-cursor C] [-full]",
		summary:  "list the tasks in a state (of a kind), a page at a time, and the cursor of the next page",
		define: func(fs *flag.FlagSet) runFunc {
			state := fs.String("state", string(cluster.Pending), "`state` of the tasks: pending (soonest first), running (by lease expiry), dead or done (newest first)")
			kind := fs.String("kind", "", "only the tasks of this `kind`")
			limit := fs.Int("limit", defaultPage, "page size, 1 to "+strconv.Itoa(cluster.MaxPage))
			cursor := fs.String("cursor", "", "`cursor` printed by the previous page (\"\" for the first page)")
			full := fs.Bool("full", false, "with -json, whole payloads (else cut at "+strconv.Itoa(payloadLimit)+" bytes)")
			return func(ctx context.Context, s *session, _ []string) error {
				st, err := parseState(*state)
				if err != nil {
					return err
				}
				if *limit < 1 || *limit > cluster.MaxPage {
					return usagef("list: -limit %d: want 1 to %d", *limit, cluster.MaxPage)
				}
				page, err := s.node.List(ctx, cluster.ListQuery{State: st, Kind: *kind, Cursor: *cursor, Limit: *limit})
				if err != nil {
					return err
				}
				if s.json {
					doc := listJSON{State: string(st), Kind: *kind, Tasks: make([]taskJSON, 0, len(page.Tasks)), Next: page.Next}
					for _, info := range page.Tasks {
						doc.Tasks = append(doc.Tasks, newTaskJSON(info, payloadCut(*full)))
					}
					writeJSON(s.stdout, doc)
					return nil
				}
				printList(s, page)
				return nil
			}
		},
	}
}

// parseState reads -state.
func parseState(s string) (cluster.State, error) {
	switch st := cluster.State(s); st {
	case cluster.Pending, cluster.Running, cluster.Dead, cluster.Done:
		return st, nil
	}
	return "", usagef("-state %q: want pending, running, dead or done", s)
}

// payloadCut is the payload limit for -full.
func payloadCut(full bool) int {
	if full {
		return -1
	}
	return payloadLimit
}

// printList writes a page as a table, then the next page's cursor.
func printList(s *session, page cluster.Page) {
	now := time.Now()
	tw := tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tDUE\tFAILED RUNS\tLOST RUNS\tPAYLOAD\tLAST ERROR")
	for _, info := range page.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n",
			cell(info.ID), cell(info.Kind), stateLabel(info), formatTime(info.Due, now),
			failedRuns(info), info.Lost,
			viewPayload(info.Payload, payloadLimit).short(40), firstLine(info.LastError, 60))
	}
	_ = tw.Flush()
	if page.Next != "" {
		fmt.Fprintf(s.stdout, "next: %s\n", page.Next)
	} else {
		fmt.Fprintln(s.stdout, "next: (last page)")
	}
}

// failedRuns is a task's failed runs against its retry limit: "0 (retry
// limit 3)"; a task dies when a run fails with no retry left, so a dead
// one has failed once more than its limit.
func failedRuns(info cluster.Info) string {
	return fmt.Sprintf("%d (retry limit %d)", info.Attempt, info.MaxRetries)
}

// retriesLeft says how many retries a task that is not dead has left.
func retriesLeft(info cluster.Info) string {
	switch left := info.MaxRetries - info.Attempt; {
	case info.State == cluster.Dead || info.State == cluster.Done:
		return ""
	case left <= 0:
		return ", no retry left"
	case left == 1:
		return ", 1 retry left"
	default:
		return fmt.Sprintf(", %d retries left", left)
	}
}

// stateLabel is info's state with what qualifies it: a pending task that
// is retrying or whose kind is paused, the node running a running one.
func stateLabel(info cluster.Info) string {
	label := string(info.State)
	if info.Retrying {
		label += ",retrying"
	}
	if info.Paused {
		label += ",paused"
	}
	if info.Owner != "" {
		label += "@" + cell(info.Owner)
	}
	return label
}

// cell makes s safe for one cell of a table: quoted if it holds anything
// but printable characters other than space (IDs and kinds come from
// producers).
func cell(s string) string {
	if s != "" && isText([]byte(s)) && !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	return strconv.Quote(s)
}

// firstLine is the first line of s, cut at max bytes, quoted if it holds
// anything unprintable.
func firstLine(s string, max int) string {
	if s == "" {
		return "-"
	}
	line, _, more := strings.Cut(s, "\n")
	v := viewPayload([]byte(line), -1)
	if !v.text {
		return strconv.Quote(line)
	}
	if len(line) > max {
		n := max
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line, more = line[:n], true
	}
	if more {
		line += "..."
	}
	return line
}
