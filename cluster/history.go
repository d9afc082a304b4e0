package cluster

import (
	"github.com/go-stpe/scheduler/cluster/driver"
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

// RunRecord is one run of a task, as the store recorded it. Times come
// from Redis's clock.
type RunRecord = driver.RunRecord

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
