package pgdriver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The transactional schedule: Store.ScheduleTx in the caller's
// transaction stores the task with the caller's own rows, so the task
// exists, and runs, if and only if the transaction commits; a started
// node hears of it on commit (its notice), not at its next sweep.

// placeOrder inserts order id and schedules its "mail" task, fixed to the
// order, in one transaction of pool, then commits it, or rolls it back
// if commit is false. Before it ends the transaction it sets committing.
func placeOrder(t *testing.T, pool *pgxpool.Pool, st *pgdriver.Store, id string, commit bool, committing *atomic.Bool) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "INSERT INTO orders (id) VALUES ($1)", id)
	require.NoError(t, err)
	res, err := st.ScheduleTx(ctx, tx, pgdriver.Task{ID: "mail-" + id, Kind: "mail", Payload: []byte(id),
		Due: time.Now(), MaxRetries: 3, Fixed: true})
	require.NoError(t, err)
	require.Equal(t, pgdriver.Created, res)
	committing.Store(commit)
	if commit {
		require.NoError(t, tx.Commit(ctx))
	} else {
		require.NoError(t, tx.Rollback(ctx))
	}
}

func TestScheduleTxRunsTheTaskOnlyWhenTheTransactionCommits(t *testing.T) {
	url := pgtest.Database(t)
	pool := pgtest.NewPool(t, url)
	ctx := context.Background()
	_, err := pool.Exec(ctx, "CREATE TABLE orders (id text PRIMARY KEY)")
	require.NoError(t, err)

	type mailed struct {
		task         cluster.Task
		committed    bool // the transaction was committing when the run started
		orderVisible bool // the handler found the order's row
	}
	var committing atomic.Bool
	runs := make(chan mailed, 4)
	// A window of an hour and a sweep every half hour: the node learns of
	// the committed task from its notice alone.
	n, d := nodeOn(t, url, map[string]cluster.Handler{"mail": func(ctx context.Context, task cluster.Task) error {
		var found bool
		err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM orders WHERE id = $1)", string(task.Payload)).Scan(&found)
		runs <- mailed{task: task, committed: committing.Load(), orderVisible: err == nil && found}
		return err
	}}, cluster.WithWindow(time.Hour), cluster.WithSweepInterval(30*time.Minute))
	startNode(t, n)
	st := d.Store()

	placeOrder(t, pool, st, "rolled-back", false, &committing)
	_, ok, err := n.Get(ctx, "mail-rolled-back")
	require.NoError(t, err)
	assert.False(t, ok, "a task scheduled in a rolled-back transaction is not stored")

	placeOrder(t, pool, st, "42", true, &committing)
	got := within(t, runs, 10*time.Second, "the committed task's run (heard from its notice)")
	assert.Equal(t, "mail-42", got.task.ID)
	assert.True(t, got.committed, "ran before its transaction committed")
	assert.True(t, got.orderVisible, "the handler sees the row committed with the task")

	eventually(t, 10*time.Second, "the completed task to leave the store", func() bool {
		return nodeCounts(t, n) == cluster.Counts{}
	})
	require.NoError(t, n.Stop(ctx))
	assert.Empty(t, runs, "the rolled-back task ran, or the committed one ran twice")
}

// TestScheduleTxIsInvisibleUntilCommit: while the transaction is open,
// no node sees the task (READ COMMITTED), so no node can claim it.
func TestScheduleTxIsInvisibleUntilCommit(t *testing.T) {
	url := pgtest.Database(t)
	pool := pgtest.NewPool(t, url)
	ctx := context.Background()
	n, d := nodeOn(t, url, nil)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = d.Store().ScheduleTx(ctx, tx, pgdriver.Task{ID: "open", Kind: "k", Due: time.Now(), Fixed: true})
	require.NoError(t, err)
	_, ok, err := n.Get(ctx, "open")
	require.NoError(t, err)
	assert.False(t, ok, "seen before commit")
	require.NoError(t, tx.Commit(ctx))
	info, ok, err := n.Get(ctx, "open")
	require.NoError(t, err)
	require.True(t, ok, "not seen after commit")
	assert.Equal(t, cluster.Pending, info.State)
}
