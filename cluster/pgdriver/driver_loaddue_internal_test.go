package pgdriver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestLoadDueReadsEachPairInOrder: with many pending tasks of many
// kinds, LoadDue reads each pair of kind and partition from the index of
// a partition's pending tasks by run time (stpe_tasks_pending), in order
// either way, and stops at the share, instead of sorting the pair's due
// tasks.
func TestLoadDueReadsEachPairInOrder(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
INSERT INTO stpe_tasks (id, kind, payload, partition, state, due, run_at, max_retries)
SELECT 'x' || g, 'k' || (g % 50), '', g % 8, 'pending', t, t, 3
FROM generate_series(1, 50000) AS g, LATERAL (SELECT now() - (g % 3600) * interval '1 second' AS t) AS d;
ANALYZE stpe_tasks`); err != nil {
		t.Fatal(err)
	}
	args := []any{[]string{"k1", "k2", "k1"}, []int32{1, 2, 3}, toTime(time.Now().Add(time.Hour)), 10}
	for name, sql := range map[string]string{"earliest": loadDueEarliest, "newest": loadDueNewest} {
		rows, err := pool.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, "using stpe_tasks_pending on") || strings.Contains(plan, "Sort") {
			t.Errorf("%s: the plan does not read stpe_tasks_pending in order:\n%s", name, plan)
		}
	}
}
