package pgdriver

import (
	"strings"
	"testing"
	"time"
)

// TestScansReadTheDueIndexInOrder: with many due tasks, a batch claim, a
// window load and LoadDue read an index of pending tasks by run time in
// order and stop at their limit, instead of sorting every due task (the
// plan a join with the paused kinds would get).
func TestScansReadTheDueIndexInOrder(t *testing.T) {
	pool := seededPool(t, `
INSERT INTO stpe_tasks (id, kind, payload, partition, state, due, run_at, max_retries)
SELECT 'x' || g, 'k' || (g % 5), '', g % 64, 'pending', t, t, 3
FROM generate_series(1, 50000) AS g, LATERAL (SELECT now() - (g % 3600) * interval '1 second' AS t) AS d;
ANALYZE stpe_tasks`)
	pairs := []any{[]string{"k1", "k2", "k1"}, []int32{1, 2, 3}, toTime(timeNowForPlan()), 10}
	plans := map[string]struct {
		sql   string
		args  []any
		index string
	}{
		"claim, all partitions":  {claimManyAll, []any{nil, "tok", int64(1e6), 10, int64(0), []string{"k1"}, "node"}, "stpe_tasks_due"},
		"claim, some partitions": {claimManySome, []any{[]int32{1, 2, 3}, "tok", int64(1e6), 10, int64(0), []string{}, "node"}, "stpe_tasks_due"},
		"window, all partitions": {loadWindowAll, []any{nil, toTime(timeNowForPlan()), 100, []string{"k1"}}, "stpe_tasks_due"},
		// LoadDue reads each pair of kind and partition from the
		// partition's pending tasks by run time, either way.
		"load due, earliest": {loadDueEarliest, pairs, "stpe_tasks_pending"},
		"load due, newest":   {loadDueNewest, pairs, "stpe_tasks_pending"},
	}
	for name, p := range plans {
		plan := planOf(t, pool, name, p.sql, p.args...)
		if !strings.Contains(plan, "using "+p.index+" on") || strings.Contains(plan, "Sort") {
			t.Errorf("%s: the plan does not read %s in order:\n%s", name, p.index, plan)
		}
	}
}

// timeNowForPlan is a window's bound for the plan: an hour from now.
func timeNowForPlan() time.Time { return time.Now().Add(time.Hour) }
