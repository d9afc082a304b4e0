package pgdriver_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// placeSQLOrder inserts order id and schedules its "mail" task, fixed to
// the order, in one database/sql transaction of db, then commits it, or
// rolls it back if commit is false.
func placeSQLOrder(t *testing.T, db *sql.DB, st *pgdriver.Store, id string, commit bool) {
	t.Helper()
	ctx := context.Background()
	tx := beginSQL(t, db)
	_, err := tx.ExecContext(ctx, "INSERT INTO orders (id) VALUES ($1)", id)
	require.NoError(t, err)
	res, err := st.ScheduleSQLTx(ctx, tx, pgdriver.Task{ID: "mail-" + id, Kind: "mail", Payload: []byte(id),
		Due: time.Now(), MaxRetries: 3, Fixed: true})
	require.NoError(t, err)
	require.Equal(t, pgdriver.Created, res)
	if commit {
		require.NoError(t, tx.Commit())
	} else {
		require.NoError(t, tx.Rollback())
	}
}

// TestScheduleSQLTxRunsTheTaskOnlyWhenTheTransactionCommits: a started
// node runs the task of a committed database/sql transaction, heard from
// its notice (the node sweeps only every half hour), with the order
// committed beside it; the task of a rolled-back one is never stored nor
// run.
func TestScheduleSQLTxRunsTheTaskOnlyWhenTheTransactionCommits(t *testing.T) {
	for _, name := range sqlDrivers {
		t.Run(name, func(t *testing.T) {
			url := pgtest.Database(t)
			db := openSQL(t, name, url)
			ctx := context.Background()
			_, err := db.ExecContext(ctx, "CREATE TABLE orders (id text PRIMARY KEY)")
			require.NoError(t, err)
			type mailed struct {
				task         cluster.Task
				orderVisible bool // the handler found the order's row
			}
			runs := make(chan mailed, 4)
			n, d := nodeOn(t, url, map[string]cluster.Handler{"mail": func(ctx context.Context, task cluster.Task) error {
				var found bool
				err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM orders WHERE id = $1)", string(task.Payload)).Scan(&found)
				runs <- mailed{task: task, orderVisible: err == nil && found}
				return err
			}}, cluster.WithWindow(time.Hour), cluster.WithSweepInterval(30*time.Minute))
			startNode(t, n)

			placeSQLOrder(t, db, d.Store(), "rolled-back", false)
			_, ok, err := n.Get(ctx, "mail-rolled-back")
			require.NoError(t, err)
			assert.False(t, ok, "a task scheduled in a rolled-back transaction is not stored")

			placeSQLOrder(t, db, d.Store(), "42", true)
			got := within(t, runs, 10*time.Second, "the committed task's run (heard from its notice)")
			assert.Equal(t, "mail-42", got.task.ID)
			assert.True(t, got.orderVisible, "the handler sees the row committed with the task")
			eventually(t, 10*time.Second, "the completed task to leave the store", func() bool {
				return nodeCounts(t, n) == cluster.Counts{}
			})
			require.NoError(t, n.Stop(ctx))
			assert.Empty(t, runs, "the rolled-back task ran, or the committed one ran twice")
		})
	}
}
