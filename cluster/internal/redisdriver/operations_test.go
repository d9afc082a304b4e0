package redisdriver

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Operations of the Redis driver on tasks stored straight in their
// partitions' keys, as the scripts of the task lifecycle write them, so
// that every state is reached without the other groups' methods.

// seed stores task id of kind in state at score (µs) in its partition,
// with the extra hash fields given.
func seed(t *testing.T, d *Driver, id, kind string, state driver.State, score int64, fields ...any) {
	t.Helper()
	ctx := context.Background()
	p := d.partOf(id)
	pipe := d.plain.Pipeline()
	pipe.HSet(ctx, p.Task(id), append([]any{"kind", kind, "payload", "p", "due", strconv.FormatInt(score, 10),
		"max", "3", "attempt", "0", "lost", "0", "sum", "x", "fixed", "1"}, fields...)...)
	z := redis.Z{Score: float64(score), Member: id}
	pipe.ZAdd(ctx, p.StateSet(string(state)), z)
	pipe.ZAdd(ctx, p.KindIndex(string(state), kind), z)
	pipe.SAdd(ctx, p.Kinds(), kind)
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
}

// openSeeded returns a driver of 4 partitions on a fresh redis-server.
func openSeeded(t *testing.T) *Driver {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	return New(rdb, Options{Prefix: "ops", Partitions: 4})
}

func TestGetReadsEveryStateWithItsTimes(t *testing.T) {
	ctx := context.Background()
	d := openSeeded(t)
	base := time.Now().Truncate(time.Second).UnixMicro()
	seed(t, d, "run", "k", driver.Running, base+1e6, "owner", "node1:7", "start", strconv.FormatInt(base, 10))
	seed(t, d, "dead", "k", driver.Dead, base, "attempt", "4", "err", "boom")
	seed(t, d, "done", "k", driver.Done, base, "fin", strconv.FormatInt(base+5, 10))

	info, ok, err := d.Get(ctx, "run")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, driver.Running, info.State)
	assert.Equal(t, "node1:7", info.Owner, "the owner token, whole")
	assert.Equal(t, base, info.Started.UnixMicro())
	assert.True(t, info.NextRun.IsZero(), "no next run unless pending")

	info, _, err = d.Get(ctx, "dead")
	require.NoError(t, err)
	assert.Equal(t, driver.Dead, info.State)
	assert.Equal(t, 4, info.Attempt)
	assert.Equal(t, "boom", info.LastError)

	info, _, err = d.Get(ctx, "done")
	require.NoError(t, err)
	assert.Equal(t, driver.Done, info.State)
	assert.Equal(t, base+5, info.Finished.UnixMicro())
}

func TestActionsRefuseByStateAndRetryAndDeleteWhatTheyMay(t *testing.T) {
	ctx := context.Background()
	d := openSeeded(t)
	now := time.Now().UnixMicro()
	seed(t, d, "run", "k", driver.Running, now+1e6, "owner", "n:1", "start", strconv.FormatInt(now, 10))
	seed(t, d, "dead", "k", driver.Dead, now)
	seed(t, d, "done", "k", driver.Done, now, "fin", strconv.FormatInt(now, 10))

	for name, err := range map[string]error{
		"run now a running task":    d.RunNow(ctx, "run"),
		"reschedule a dead task":    d.Reschedule(ctx, "dead", time.Now()),
		"retry a done record":       d.Retry(ctx, "done"),
		"delete a running task":     d.Delete(ctx, "run"),
		"run now a done record":     d.RunNow(ctx, "done"),
		"retry a running task":      d.Retry(ctx, "run"),
		"reschedule a running task": d.Reschedule(ctx, "run", time.Now()),
	} {
		var se *driver.StateError
		require.ErrorAs(t, err, &se, name)
		assert.ErrorIs(t, err, driver.ErrWrongState, name)
	}
	var se *driver.StateError
	require.ErrorAs(t, d.RunNow(ctx, "run"), &se)
	assert.Equal(t, driver.Running, se.State, "the refusal names the state found")

	require.NoError(t, d.Retry(ctx, "dead"))
	info, _, err := d.Get(ctx, "dead")
	require.NoError(t, err)
	assert.Equal(t, driver.Pending, info.State, "a retried task is pending")
	require.NoError(t, d.Delete(ctx, "done"))
	_, ok, err := d.Get(ctx, "done")
	require.NoError(t, err)
	assert.False(t, ok, "a deleted done record is gone")
}

func TestListOfDeadTasksIsNewestFirstAcrossPages(t *testing.T) {
	ctx := context.Background()
	d := openSeeded(t)
	base := time.Now().UnixMicro()
	var want []string
	for i := range 25 {
		id := fmt.Sprintf("d%02d", i)
		seed(t, d, id, "k", driver.Dead, base+int64(i/2))
	}
	// newest first, ties (two tasks to a time) by ID, descending too
	for i := 24; i >= 0; i-- {
		want = append(want, fmt.Sprintf("d%02d", i))
	}
	var got []string
	q := driver.ListQuery{State: driver.Dead, Limit: 4}
	for {
		page, err := d.List(ctx, q)
		require.NoError(t, err)
		for _, info := range page.Tasks {
			got = append(got, info.ID)
			assert.True(t, info.NextRun.IsZero(), "only pending tasks have a next run")
		}
		if page.Next == (driver.Position{}) {
			break
		}
		q.After = page.Next
	}
	assert.Equal(t, want, got)
}

func TestBulkRetryAndDeleteBeforeATime(t *testing.T) {
	ctx := context.Background()
	d := openSeeded(t)
	now := time.Now()
	for i := range 12 {
		seed(t, d, fmt.Sprintf("old%02d", i), "k", driver.Dead, now.Add(-time.Hour).UnixMicro())
	}
	seed(t, d, "young", "k", driver.Dead, now.Add(time.Minute).UnixMicro())
	for i := range 5 {
		seed(t, d, fmt.Sprintf("fin%d", i), "j", driver.Done, now.Add(-time.Hour).UnixMicro())
	}
	n, err := d.CountSelected(ctx, driver.Selection{State: driver.Dead, Before: now})
	require.NoError(t, err)
	assert.Equal(t, 12, n)
	n, err = d.CountSelected(ctx, driver.Selection{State: driver.Dead, Before: now, IDs: []string{"old00", "young", "fin0"}})
	require.NoError(t, err)
	assert.Equal(t, 1, n, "by IDs, only those in the state before the time")

	res, err := d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkRetry, Selection: driver.Selection{State: driver.Dead, Before: now}})
	require.NoError(t, err)
	assert.Equal(t, driver.BulkResult{Matched: 12, Changed: 12}, res)
	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkDelete, Selection: driver.Selection{State: driver.Done, Kind: "j"}})
	require.NoError(t, err)
	assert.Equal(t, driver.BulkResult{Matched: 5, Changed: 5}, res)
	counts, err := d.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, driver.Counts{Pending: 12, Dead: 1}, counts)
}

func TestReadTimelineSumsThePartitionsOfAKind(t *testing.T) {
	ctx := context.Background()
	d := openSeeded(t)
	minute := time.Now().Unix()/60 - 1
	for i, p := range d.parts[:2] {
		require.NoError(t, d.plain.HSet(ctx, p.Timeline(minute),
			"a|f", 1, "a|l", 2, "a|p", 10+i, "a|o", 3_000_000*(i+1), "a|0", 4, "a|5", 1,
			"b|f", 7, "b|5", 2, "b|bogus", 9, "junk", 1).Err())
	}
	got, err := d.ReadTimeline(ctx, "a", minute, minute+1)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, driver.MinuteCounts{Minute: minute, Late: []uint64{8, 0, 0, 0, 0, 2}, Failed: 2, Lost: 4,
		Pending: 21, Oldest: 6 * time.Second}, got[0], "sums, the oldest is the largest")
	assert.Equal(t, driver.MinuteCounts{Minute: minute + 1}, got[1])
	all, err := d.ReadTimeline(ctx, "", minute, minute)
	require.NoError(t, err)
	assert.Equal(t, 16, all[0].Failed, "every kind")
	assert.Equal(t, []uint64{8, 0, 0, 0, 0, 6}, all[0].Late)
}
