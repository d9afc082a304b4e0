package otelcluster

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/go-stpe/scheduler/cluster"
)

// The attributes of the metrics and spans. The OpenTelemetry semantic
// conventions define none for durable task queues or their runs, so they
// live in a "scheduler.cluster.*" namespace beside otelscheduler's
// "scheduler.*"; the Redis latency uses the conventions' own database
// attributes (db.system.name, db.operation.name, db.stored_procedure.name,
// db.response.status_code, error.type), and spans their error.type and
// exception.* attributes.
const (
	// KindKey is the task's kind (for a periodic task, "@" + its name),
	// bounded by WithMaxKinds on metrics and span names; spans carry the
	// kind as stored.
	KindKey = attribute.Key("scheduler.cluster.task.kind")
	// OutcomeKey is how a run ended: a cluster.Outcome ("succeeded",
	// "failed", "timed_out", "lost", "canceled", "handed_back").
	OutcomeKey = attribute.Key("scheduler.cluster.run.outcome")
	// TaskIDKey is a span attribute: the task's ID (cluster.Task.ID).
	TaskIDKey = attribute.Key("scheduler.cluster.task.id")
	// AttemptKey is a span attribute: the failed runs before this one
	// (cluster.Task.Attempt), 0 on the first run.
	AttemptKey = attribute.Key("scheduler.cluster.task.attempt")
	// LostKey is a span attribute: the runs lost to faults before this
	// one (cluster.Task.Lost).
	LostKey = attribute.Key("scheduler.cluster.task.lost")
	// DueKey is a span attribute: the time the task was scheduled for
	// (cluster.Task.Due), RFC 3339 with nanoseconds.
	DueKey = attribute.Key("scheduler.cluster.task.due")
	// DeadKey is a span attribute, true when the run's failure made the
	// task dead.
	DeadKey = attribute.Key("scheduler.cluster.task.dead")
	// NodeKey is a span attribute: the name of the node that ran the task
	// (cluster.Node.Name, as run records and Info.Owner give it), once
	// Register is called. Metrics do not carry it: a node's name is new
	// at every start.
	NodeKey = attribute.Key("scheduler.cluster.node.name")
)

// The values of KindKey beyond the bound.
const (
	// OtherKind is the kind reported for kinds beyond WithMaxKinds.
	OtherKind = "other"
)

// outcomes are the run outcomes the cluster reports, in the order of the
// kind labels' precomputed attribute sets.
var outcomes = [...]cluster.Outcome{
	cluster.OutcomeSucceeded,
	cluster.OutcomeFailed,
	cluster.OutcomeTimedOut,
	cluster.OutcomeLost,
	cluster.OutcomeCanceled,
	cluster.OutcomeHandedBack,
}

// numOutcomes is the number of outcomes with precomputed attribute sets.
const numOutcomes = len(outcomes)

// outcomeIndex returns o's index in outcomes, or -1 for an outcome a later
// cluster version may add, whose attribute set is then made per run.
func outcomeIndex(o cluster.Outcome) int {
	for i, known := range outcomes {
		if o == known {
			return i
		}
	}
	return -1
}
