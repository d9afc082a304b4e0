package pgdriver

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestOperationsReadAnIndex: on 12,000 tasks in the four states, a page
// of List (of every kind or of one, first or after a position), the
// count of a kind's due tasks and the kinds stored each read an index
// of their state, never a sequential scan of the table; a first page
// reads in the listing's order and at most sorts the ties of one time
// (Incremental Sort), never every task of the state. (After a position
// the planner may read the tasks after it from the index and sort them
// when it reckons them few.)
func TestOperationsReadAnIndex(t *testing.T) {
	pool := seededPool(t, `
INSERT INTO stpe_tasks (id, kind, payload, partition, state, due, run_at, max_retries,
    lease_token, lease_expires, finished_at, expires_at)
SELECT 'x' || g, 'k' || (g % 5), '', g % 64, s.state, t, t, 3,
    CASE WHEN s.state = 'running' THEN 'tok' END, CASE WHEN s.state = 'running' THEN t END,
    CASE WHEN s.state IN ('dead', 'done') THEN t END, CASE WHEN s.state = 'done' THEN t + interval '1 day' END
FROM generate_series(1, 12000) AS g,
    LATERAL (SELECT now() - (g % 3600) * interval '1 second' AS t) AS d,
    LATERAL (SELECT (ARRAY['pending', 'running', 'dead', 'done'])[1 + g % 4] AS state) AS s;
ANALYZE stpe_tasks`)
	after := driver.Position{At: time.Now().Add(-30 * time.Minute), ID: "x5"}
	type plan struct {
		sql     string
		args    []any
		inOrder bool // the plan reads in the listing's order
	}
	plans := map[string]plan{
		"due of kind":  {dueOfKindSQL, []any{[]int32{1, 2, 3}, "k1", toTime(time.Now())}, false},
		"stored kinds": {storedKindsSQL, []any{[]int32{1, 2, 3}}, false},
	}
	for _, state := range driver.States {
		for _, kind := range []string{"", "k3"} {
			for _, pos := range []driver.Position{{}, after} {
				sql, args := listStatement(driver.ListQuery{State: state, Kind: kind, After: pos, Limit: 20})
				name := "list " + string(state) + " of kind " + kind
				if pos != (driver.Position{}) {
					name += " after a position"
				}
				plans[name] = plan{sql, args, pos == (driver.Position{})}
			}
		}
	}
	for name, p := range plans {
		text := planOf(t, pool, name, p.sql, p.args...)
		if strings.Contains(text, "Seq Scan on stpe_tasks") {
			t.Errorf("%s: the plan scans the table:\n%s", name, text)
		}
		if !strings.Contains(text, "Index") {
			t.Errorf("%s: the plan reads no index:\n%s", name, text)
		}
		if p.inOrder && fullSort.MatchString(text) {
			t.Errorf("%s: the plan sorts every task:\n%s", name, text)
		}
	}
}

// fullSort matches a plan's Sort node (not an Incremental Sort).
var fullSort = regexp.MustCompile(`(?m)(^|->  )Sort  \(`)

// seededPool is the pool of a fresh migrated database where seed (SQL)
// ran.
func seededPool(t *testing.T, seed string) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), seed); err != nil {
		t.Fatal(err)
	}
	return pool
}

// planOf is the plan PostgreSQL makes of sql with args, one line a node.
func planOf(t *testing.T, pool *pgxpool.Pool, name, sql string, args ...any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return strings.Join(lines, "\n")
}
