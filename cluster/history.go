package cluster

import (
	"encoding/json"
	"strings"
	"time"
)

// Run history: the scripts that end a run (complete, fail, release, reap,
// cancel) append a record of it to the task's hash, in the same step as
// the change of state, so the history costs no round trip of its own. The
// task keeps its last MaxHistory records. asynq keeps only the last error
// and River a list of errors per attempt (JobRow.Errors); this is closer to
// River's, with the node and the outcome of every run.

// MaxHistory is how many run records a task keeps: the latest ones.
const MaxHistory = 10

// maxHistoryError is how many bytes of a failed run's error text a run
// record keeps (Info.LastError keeps the whole text of the last one).
const maxHistoryError = 2048

// RunRecord is one run of a task, as the store recorded it. Times come
// from Redis's clock.
type RunRecord struct {
	// Node is the name of the node that ran it (Node.Name), or "" for a
	// cancellation of a task that was not running.
	Node string
	// Start is when the node claimed the task; End when the run's outcome
	// was recorded.
	Start, End time.Time
	// Outcome says how the run ended: OutcomeSucceeded, OutcomeFailed,
	// OutcomeTimedOut, OutcomeLost (its lease expired: its node died,
	// stalled or lost Redis, and the reaper took the task back),
	// OutcomeHandedBack (Node.Stop gave it back unrun or interrupted), or
	// OutcomeCanceled (Node.Cancel removed it; kept only with
	// WithKeepDone, and a task canceled while pending gets a record with
	// no node and Start equal to End).
	Outcome Outcome
	// Error is the text of a failed, timed-out or lost run's error (at
	// most 2 KiB of it), or "".
	Error string
}

// storedRun is a run record as the scripts write it.
type storedRun struct {
	Node    string `json:"n"`
	Start   string `json:"s"`
	End     string `json:"e"`
	Outcome string `json:"o"`
	Error   string `json:"x"`
}

// parseHistory reads the field "hist" of a task's hash, oldest run first;
// a field it cannot read gives no history rather than an error, since the
// task itself is sound.
func parseHistory(s string) []RunRecord {
	if s == "" {
		return nil
	}
	var stored []storedRun
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil
	}
	out := make([]RunRecord, 0, len(stored))
	for _, r := range stored {
		start, _ := parseMicros(r.Start)
		end, _ := parseMicros(r.End)
		out = append(out, RunRecord{Node: r.Node, Start: time.UnixMicro(start), End: time.UnixMicro(end),
			Outcome: Outcome(r.Outcome), Error: r.Error})
	}
	return out
}

// ownerNode is the node part of an owner token ("<node>:<counter>").
func ownerNode(token string) string {
	if i := strings.LastIndexByte(token, ':'); i >= 0 {
		return token[:i]
	}
	return token
}

// Name is this node's name: random, fixed at New, the stem of its claim
// tokens. Run records (RunRecord.Node), Info.Owner and the registry
// (Member.Name) name a node by it.
func (n *Node) Name() string { return n.name }
