package cluster

import (
	"context"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Refusing an unknown kind: Pause, Resume and the bulk actions on a kind
// nothing knows would silently do nothing (a typo in a kind's name), so
// they are refused with ErrUnknownKind. asynq answers a pause of an
// unknown queue with success; River's QueuePause refuses a queue it has
// no record of.

// ErrUnknownKind is wrapped by the error of Pause, Resume and the bulk
// actions (RetryAll ...) when their kind is one that no live node handles
// (prefix:nodekinds), no partition stores or has paused, no periodic task
// declares ("@" + its name) and this node does not handle either.
var ErrUnknownKind = driver.ErrUnknownKind

// checkKnownKind returns nil if kind is known, else an error wrapping
// ErrUnknownKind for what. It reads, in one pipeline, the kinds of the
// live nodes, the declared periodic tasks and every partition's sets of
// stored and paused kinds.
func (n *Node) checkKnownKind(ctx context.Context, what, kind string) error {
	n.mu.Lock()
	_, local := n.handlers[kind]
	n.mu.Unlock()
	if local {
		return nil
	}
	known, err := n.drv.KnownKind(ctx, kind)
	if err != nil {
		return n.failed(what, err)
	}
	if known {
		return nil
	}
	return &unknownKindError{what: what, kind: kind}
}

// unknownKindError is "cluster: what: unknown kind "k": ...", wrapping
// ErrUnknownKind.
type unknownKindError struct{ what, kind string }

func (e *unknownKindError) Error() string {
	return "cluster: " + e.what + ": unknown kind " + `"` + e.kind + `"` +
		": no live node handles it, no task of it is stored and no periodic task declares it"
}

func (e *unknownKindError) Unwrap() error { return ErrUnknownKind }
