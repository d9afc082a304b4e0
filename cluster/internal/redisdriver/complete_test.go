package redisdriver

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompleteWithoutDoneRecordWritesNoHistory: a completion that keeps
// no done record deletes the task without writing its run history first
// or reading the clock; one that keeps a record writes both.
func TestCompleteWithoutDoneRecordWritesNoHistory(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	d := New(rdb, Options{Prefix: "cc", Partitions: 4})

	claim := func(n int) string {
		id := dueTaskIn(t, d, n)
		c, err := d.Claim(ctx, id, "k", time.Now(), time.Minute, "node:1")
		require.NoError(t, err)
		require.Equal(t, driver.ClaimWon, c.Outcome)
		return id
	}
	gone := claim(1)
	hset, clock := commandCalls(t, rdb, "hset"), commandCalls(t, rdb, "time")
	res, err := d.Complete(ctx, gone, "k", "node:1", time.Hour, driver.KeepDone{}, driver.Timeline{})
	require.NoError(t, err)
	assert.Equal(t, driver.Recorded("done"), res)
	assert.Equal(t, hset, commandCalls(t, rdb, "hset"), "no history written for a task deleted")
	assert.Equal(t, clock, commandCalls(t, rdb, "time"), "no clock read")
	n, err := rdb.Exists(ctx, d.partOf(gone).Task(gone)).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the task is deleted")

	kept := claim(2)
	res, err = d.Complete(ctx, kept, "k", "node:1", time.Hour, driver.KeepDone{Age: time.Hour, Max: 10}, driver.Timeline{})
	require.NoError(t, err)
	assert.Equal(t, driver.Recorded("done"), res)
	info, ok, err := d.Get(ctx, kept)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, driver.Done, info.State)
	require.NotEmpty(t, info.History, "a done record keeps its run history")
}
