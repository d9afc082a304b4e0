package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListByKindNeverSkipsOrRepeatsWhileTasksOfEveryKindComeAndGo lists
// the pending tasks of one kind 7 at a time, many sharing a due time, among
// tasks of nine other kinds, while another goroutine stores and cancels
// tasks of every kind (the listed kind included) on both sides of the
// cursor: every task of the kind stored before the listing began is listed
// exactly once, in order, and nothing of another kind is listed.
func TestListByKindNeverSkipsOrRepeatsWhileTasksOfEveryKindComeAndGo(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	n := newNode(t, srv, nil)
	base := time.Now().Add(time.Hour).Truncate(time.Second)
	want := map[string]bool{}
	for i := range 60 {
		for k := range 10 {
			id, err := n.Schedule(ctx, fmt.Sprintf("kind%d", k), nil, base.Add(time.Duration(i%4)*time.Second),
				cluster.WithID(fmt.Sprintf("k%d-%02d", k, (i*17)%60)))
			require.NoError(t, err)
			if k == 3 {
				want[id] = true
			}
		}
	}

	churnCtx, stopChurn := context.WithCancel(ctx)
	var churn sync.WaitGroup
	churnErr := make(chan error, 1)
	churn.Go(func() {
		for i := 0; churnCtx.Err() == nil; i++ {
			kind := fmt.Sprintf("kind%d", i%10)
			id := fmt.Sprintf("churn-%d", i)
			due := base.Add(time.Duration(i%5) * time.Second)
			if _, err := n.Schedule(ctx, kind, nil, due, cluster.WithID(id)); err != nil {
				churnErr <- err
				return
			}
			if i%2 == 0 {
				if _, err := n.Cancel(ctx, id); err != nil {
					churnErr <- err
					return
				}
			}
		}
	})

	seen := map[string]int{}
	var last cluster.Info
	q := cluster.ListQuery{State: cluster.Pending, Kind: "kind3", Limit: 7}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "the listing does not end")
		page, err := n.List(ctx, q)
		require.NoError(t, err)
		for _, info := range page.Tasks {
			require.Equal(t, "kind3", info.Kind)
			require.Equal(t, cluster.Pending, info.State)
			if last.ID != "" && (info.Due.Before(last.Due) || info.Due.Equal(last.Due) && info.ID <= last.ID) {
				t.Fatalf("%s (%v) listed after %s (%v)", info.ID, info.Due, last.ID, last.Due)
			}
			last = info
			seen[info.ID]++
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	stopChurn()
	churn.Wait()
	select {
	case err := <-churnErr:
		t.Fatal(err)
	default:
	}
	for id := range want {
		assert.Equal(t, 1, seen[id], "task %s", id)
	}
	for id, k := range seen {
		assert.Equal(t, 1, k, "task %s listed %d times", id, k)
	}
}

func TestCountsByKindAndListsOfDeadAndDoneByKindNewestFirst(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	fail := func(context.Context, cluster.Task) error { return errors.New("boom") }
	ok := func(context.Context, cluster.Task) error { return nil }
	w := newNode(t, srv, map[string]cluster.Handler{"bad1": fail, "bad2": fail, "good1": ok, "good2": ok},
		cluster.WithMaxRetries(0), cluster.WithKeepDone(time.Hour, 100))
	start(t, w)
	ended := map[string][]string{} // kind: IDs in the order they ended
	for i := range 3 {
		for _, kind := range []string{"bad1", "good1", "bad2", "good2"} {
			id, err := w.Schedule(ctx, kind, nil, time.Now(), cluster.WithID(fmt.Sprintf("%s-%d", kind, i)))
			require.NoError(t, err)
			waitFor(t, 10*time.Second, "task "+id+" to end", func() bool {
				info, ok, err := w.Get(ctx, id)
				return err == nil && ok && (info.State == cluster.Dead || info.State == cluster.Done)
			})
			ended[kind] = append(ended[kind], id)
		}
	}
	_, err := w.Schedule(ctx, "good1", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	_, err = w.Schedule(ctx, "idle", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	// A kind with no task, paused by a node that handles it.
	idler := newNode(t, srv, map[string]cluster.Handler{"nothing": ok})
	require.NoError(t, idler.Pause(ctx, "nothing"))

	total, byKind, err := w.CountsByKind(ctx)
	require.NoError(t, err)
	assert.Equal(t, cluster.Counts{Pending: 2, Dead: 6, Done: 6}, total)
	assert.Equal(t, []cluster.KindCounts{
		{Kind: "bad1", Counts: cluster.Counts{Dead: 3}},
		{Kind: "bad2", Counts: cluster.Counts{Dead: 3}},
		{Kind: "good1", Counts: cluster.Counts{Pending: 1, Done: 3}},
		{Kind: "good2", Counts: cluster.Counts{Done: 3}},
		{Kind: "idle", Counts: cluster.Counts{Pending: 1}},
		{Kind: "nothing", Paused: true},
	}, byKind)
	c, err := w.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, total, c)

	for kind, state := range map[string]cluster.State{"bad2": cluster.Dead, "good1": cluster.Done} {
		var got []string
		q := cluster.ListQuery{State: state, Kind: kind, Limit: 2}
		for {
			page, err := w.List(ctx, q)
			require.NoError(t, err)
			for _, info := range page.Tasks {
				assert.Equal(t, state, info.State)
				got = append(got, info.ID)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		e := ended[kind]
		assert.Equal(t, []string{e[2], e[1], e[0]}, got, "%s %s newest first", state, kind)
	}

	// Once a kind has no task left and is not paused, it leaves the counts.
	for _, id := range ended["bad1"] {
		require.NoError(t, w.Delete(ctx, id))
	}
	_, byKind, err = w.CountsByKind(ctx)
	require.NoError(t, err)
	for _, k := range byKind {
		assert.NotEqual(t, "bad1", k.Kind)
	}
}
