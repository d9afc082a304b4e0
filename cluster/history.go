package cluster

import (
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strings"
)

// Run history: the scripts that end a run (complete, fail, release, reap,
// cancel) append a record of it to the task's hash, in the same step as
// the change of state, so the history costs no round trip of its own. The
// task keeps its last MaxHistory records. asynq keeps only the last error
// and River a list of errors per attempt (JobRow.Errors); this is closer to
// River's, with the node and the outcome of every run.

// MaxHistory is how many run records a task keeps: the latest ones.
const MaxHistory = driver.MaxHistory

// maxHistoryError is how many bytes of a failed run's error text a run
// record keeps (Info.LastError keeps the whole text of the last one).
const maxHistoryError = driver.MaxHistoryError

// RunRecord is one run of a task, as the store recorded it. Times come
// from Redis's clock.
type RunRecord = driver.RunRecord

// parseHistory reads the field "hist" of a task's hash, oldest run first.
func parseHistory(s string) []RunRecord { return redisdriver.ParseHistory(s) }

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
