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
}

// newTaskJSON is info's document, its payload cut at limit bytes (all if
// limit < 0).
func newTaskJSON(info cluster.Info, limit int) taskJSON {
	return taskJSON{
		ID:         info.ID,
		Kind:       info.Kind,
		State:      string(info.State),
		Due:        info.Due.UTC(),
		Attempt:    info.Attempt,
		Lost:       info.Lost,
		MaxRetries: info.MaxRetries,
		LastError:  info.LastError,
		Payload:    viewPayload(info.Payload, limit).json(),
	}
}
