package pgdriver

import (
	"strings"
	"testing"
)

// TestCompletionsFindTheRunByItsID: with many tasks running in a table
// the planner has no statistics of yet (a young table, as a busy one
// between two analyses), a completion finds its run through the primary
// key, not by scanning the partial index of every running lease for its
// ID, which made each completion's cost grow with the tasks running.
func TestCompletionsFindTheRunByItsID(t *testing.T) {
	pool := seededPool(t, `
INSERT INTO stpe_tasks (id, kind, payload, partition, state, due, run_at, max_retries, lease_token, lease_expires)
SELECT 'x' || g, 'k', '', g % 64, 'running', now(), now(), 3, 'tok' || g, now() + interval '1 hour'
FROM generate_series(1, 2000) AS g`)
	minute, ttl := int64(1), int64(3600e6)
	plans := map[string]struct {
		sql  string
		args []any
	}{
		"one":  {completeOne, []any{"x7", "tok7", int64(0), int64(0), 0, minute, ttl}},
		"many": {completeMany, []any{[]string{"x7", "x8"}, []string{"tok7", "tok8"}, int64(0), int64(0), 0, minute, ttl}},
	}
	for name, p := range plans {
		plan := planOf(t, pool, name, p.sql, p.args...)
		if strings.Contains(plan, "stpe_tasks_leases") || !strings.Contains(plan, "stpe_tasks_pkey") {
			t.Errorf("complete %s: the plan does not find the run by its ID:\n%s", name, plan)
		}
	}
}
