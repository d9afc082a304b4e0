package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The JSON documents: one per command, on stdout, with field names that stay
// stable (docs/cluster.md, "Command-line tool", lists them). Times are RFC
// 3339 in UTC with the stored precision (microseconds).

// writeJSON writes v as one indented JSON document and a newline.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// errorJSON is the document of a command that failed.
type errorJSON struct {
	// Error is the error's text, as on stderr.
	Error string `json:"error"`
	// Reason is "usage" (exit status 2), "not_found", "wrong_state" or
	// "failed" (exit status 1).
	Reason string `json:"reason"`
}

// taskJSON is one stored task (list's tasks, show's document).
type taskJSON struct {
	ID         string      `json:"id"`
	Kind       string      `json:"kind"`
	State      string      `json:"state"`
	Due        time.Time   `json:"due"`
	Attempt    int         `json:"attempt"`
	Lost       int         `json:"lost"`
	MaxRetries int         `json:"max_retries"`
	LastError  string      `json:"last_error"`
	Payload    payloadJSON `json:"payload"`
	// Owner is the node running the task (its lease holder), or "".
	Owner string `json:"owner"`
	// Started is when the run in flight was claimed, null unless running.
	Started *time.Time `json:"started"`
	// NextRun is when a pending task runs next: its due time on a first
	// run, a retry's time after a failure, the time run or reschedule
	// moved it to; null unless pending.
	NextRun *time.Time `json:"next_run"`
	// Finished is when a done record's task ended, null unless done.
	Finished *time.Time `json:"finished"`
	// Canceled is true for a done record of a task that cancel removed
	// (not one that completed).
	Canceled bool `json:"canceled"`
	// Retrying is true for a pending task that failed or was lost before.
	Retrying bool `json:"retrying"`
	// Paused is true if the task's kind is paused.
	Paused bool `json:"paused"`
	// History is the task's last runs, oldest first.
	History []runJSON `json:"history"`
}

// runJSON is one run of a task's history.
type runJSON struct {
	// Node ran it ("" for the cancellation of a task that was not running).
	Node  string    `json:"node"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Outcome is succeeded, failed, timed_out, lost, handed_back or
	// canceled.
	Outcome string `json:"outcome"`
	// Error is a failed, timed-out or lost run's error text, or "".
	Error string `json:"error"`
}

// utcOrNil is t in UTC, or nil if t is zero.
func utcOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// newTaskJSON is info's document, its payload cut at limit bytes (all if
// limit < 0).
func newTaskJSON(info cluster.Info, limit int) taskJSON {
	doc := taskJSON{
		ID:         info.ID,
		Kind:       info.Kind,
		State:      string(info.State),
		Due:        info.Due.UTC(),
		Attempt:    info.Attempt,
		Lost:       info.Lost,
		MaxRetries: info.MaxRetries,
		LastError:  info.LastError,
		Payload:    viewPayload(info.Payload, limit).json(),
		Owner:      info.Owner,
		Started:    utcOrNil(info.Started),
		NextRun:    utcOrNil(info.NextRun),
		Finished:   utcOrNil(info.Finished),
		Canceled:   info.Canceled,
		Retrying:   info.Retrying,
		Paused:     info.Paused,
		History:    make([]runJSON, 0, len(info.History)),
	}
	for _, r := range info.History {
		doc.History = append(doc.History, runJSON{Node: r.Node, Start: r.Start.UTC(), End: r.End.UTC(), Outcome: string(r.Outcome), Error: r.Error})
	}
	return doc
}
