package cluster_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeMaker makes a node of the test's keyspace with handlers and opts,
// stopped when t ends.
type nodeMaker func(t *testing.T, handlers map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node

// sumMinutes adds up the runs, failures and lost runs of minutes.
func sumMinutes(ms []cluster.Minute) (runs, failed, lost int) {
	for _, m := range ms {
		runs += m.Runs
		failed += m.Failed
		lost += m.Lost
	}
	return runs, failed, lost
}

// timeline reads kind's timeline of the last ten minutes through n.
func timeline(t *testing.T, n *cluster.Node, kind string) []cluster.Minute {
	t.Helper()
	ms, err := n.Timeline(context.Background(), kind, time.Now().Add(-10*time.Minute))
	require.NoError(t, err)
	return ms
}

// trueQuantile is quantile q of sorted, with the rank the timeline uses.
func trueQuantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

// checkTimelineWorkload runs a known workload and checks the timeline
// counts it exactly: 20 runs that succeed started about 2 s late, 5 that
// fail (no retries, so 5 failed runs), and one run lost with its node's
// lease followed by the run that succeeded.
func checkTimelineWorkload(t *testing.T, mk nodeMaker) {
	ctx := context.Background()
	stuck := make(chan cluster.Task, 1)
	a := mk(t, map[string]cluster.Handler{"stuck": blocking(stuck)})
	start(t, a)
	_, err := a.Schedule(ctx, "stuck", nil, time.Now())
	require.NoError(t, err)
	recv(t, stuck, 10*time.Second, "the run that will be lost")
	a.StopNow()

	done := make(chan struct{}, 32)
	b := mk(t, map[string]cluster.Handler{
		"ok":    func(context.Context, cluster.Task) error { done <- struct{}{}; return nil },
		"bad":   func(context.Context, cluster.Task) error { done <- struct{}{}; return errors.New("bad") },
		"stuck": func(context.Context, cluster.Task) error { done <- struct{}{}; return nil },
	}, cluster.WithMaxRetries(0), cluster.WithKeepDone(time.Hour, 1000))
	var okIDs []string
	for range 20 {
		id, err := b.Schedule(ctx, "ok", nil, time.Now().Add(-2*time.Second))
		require.NoError(t, err)
		okIDs = append(okIDs, id)
	}
	for range 5 {
		_, err := b.Schedule(ctx, "bad", nil, time.Now())
		require.NoError(t, err)
	}
	start(t, b)
	for range 26 {
		recv(t, done, 20*time.Second, "a run")
	}
	waitFor(t, 20*time.Second, "every outcome recorded", func() bool {
		runs, _, _ := sumMinutes(timeline(t, b, ""))
		return runs == 27
	})
	require.NoError(t, b.Stop(ctx))

	for _, c := range []struct {
		kind               string
		runs, failed, lost int
	}{{"", 27, 5, 1}, {"ok", 20, 0, 0}, {"bad", 5, 5, 0}, {"stuck", 2, 0, 1}, {"other", 0, 0, 0}} {
		runs, failed, lost := sumMinutes(timeline(t, b, c.kind))
		assert.Equal(t, []int{c.runs, c.failed, c.lost}, []int{runs, failed, lost}, "kind %q", c.kind)
	}

	// The lateness quantiles of "ok", from the runs' own records: each
	// is the upper bound of the true quantile's bucket, at most 25 % above.
	var lateness []time.Duration
	for _, id := range okIDs {
		info := get(t, b, id)
		require.Len(t, info.History, 1)
		lateness = append(lateness, info.History[0].Start.Sub(info.Due))
	}
	slices.Sort(lateness)
	var minutes []cluster.Minute
	for _, m := range timeline(t, b, "ok") {
		if m.Runs > 0 {
			minutes = append(minutes, m)
		}
	}
	if len(minutes) != 1 {
		t.Skipf("the runs straddled a minute's end (%d minutes); the quantiles are per minute", len(minutes))
	}
	for _, q := range []struct {
		got time.Duration
		q   float64
	}{{minutes[0].LatenessP50, 0.50}, {minutes[0].LatenessP99, 0.99}} {
		want := trueQuantile(lateness, q.q)
		assert.GreaterOrEqual(t, q.got, want, "p%v", q.q*100)
		assert.LessOrEqual(t, q.got, want*5/4+time.Microsecond, "p%v", q.q*100)
	}
}

// checkTimelinePending checks the sample of pending tasks: how many and
// how overdue the oldest is, per kind.
func checkTimelinePending(t *testing.T, mk nodeMaker) {
	ctx := context.Background()
	n := mk(t, map[string]cluster.Handler{"later": func(context.Context, cluster.Task) error { return nil }})
	for range 3 {
		_, err := n.Schedule(ctx, "later", nil, time.Now().Add(time.Hour))
		require.NoError(t, err)
	}
	overdueSince := time.Now().Add(-5 * time.Second)
	for i := range 2 {
		_, err := n.Schedule(ctx, "nobody", nil, overdueSince.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
	}
	start(t, n)
	require.NoError(t, n.SampleTimeline(ctx))
	last := func(kind string) cluster.Minute {
		ms := timeline(t, n, kind)
		require.NotEmpty(t, ms)
		return ms[len(ms)-1]
	}
	later, nobody, all := last("later"), last("nobody"), last("")
	assert.Equal(t, 3, later.Pending)
	assert.Zero(t, later.OldestOverdue)
	assert.Equal(t, 2, nobody.Pending)
	assert.GreaterOrEqual(t, nobody.OldestOverdue, 4*time.Second)
	assert.Less(t, nobody.OldestOverdue, time.Minute)
	assert.Equal(t, 5, all.Pending)
	// The node samples at Start too, so two samples may land between
	// the two reads: the ages agree within the time between them.
	assert.InDelta(t, float64(nobody.OldestOverdue), float64(all.OldestOverdue), float64(time.Second))
}

// timelineKeys lists the timeline hashes of prefix (a hash tag, such
// as "{name}") on every master of rdb.
func timelineKeys(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	var mu sync.Mutex // guards keys: ForEachMaster scans the masters at once
	var keys []string
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, "*:tl:*", 1000).Iterator()
		for it.Next(ctx) {
			if strings.HasPrefix(it.Val(), strings.TrimSuffix(prefix, "}")+"/") {
				mu.Lock()
				keys = append(keys, it.Val())
				mu.Unlock()
			}
		}
		return it.Err()
	}
	ctx := context.Background()
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		require.NoError(t, c.ForEachMaster(ctx, scan))
	case *redis.Client:
		require.NoError(t, scan(ctx, c))
	default:
		t.Fatalf("client %T", rdb)
	}
	return keys
}

// checkTimelineRetention checks that a short retention expires the
// minutes, and that retention 0 records nothing.
func checkTimelineRetention(t *testing.T, rdb redis.UniversalClient, prefix string, mk nodeMaker) {
	ctx := context.Background()
	for _, keep := range []time.Duration{5 * time.Second, 0} {
		done := make(chan struct{}, 3)
		n := mk(t, map[string]cluster.Handler{
			"k": func(context.Context, cluster.Task) error { done <- struct{}{}; return nil },
		}, cluster.WithTimelineRetention(keep))
		start(t, n)
		for range 3 {
			_, err := n.Schedule(ctx, "k", nil, time.Now())
			require.NoError(t, err)
		}
		for range 3 {
			recv(t, done, 10*time.Second, "a run")
		}
		if keep == 0 {
			waitFor(t, 10*time.Second, "every task done", func() bool { return counts(t, n) == cluster.Counts{} })
			require.NoError(t, n.Stop(ctx))
			runs, _, _ := sumMinutes(timeline(t, n, ""))
			assert.Zero(t, runs, "recording off")
			assert.Empty(t, timelineKeys(t, rdb, prefix), "recording off")
			continue
		}
		waitFor(t, 10*time.Second, "the runs counted", func() bool {
			runs, _, _ := sumMinutes(timeline(t, n, "k"))
			return runs == 3
		})
		require.NoError(t, n.Stop(ctx))
		keys := timelineKeys(t, rdb, prefix)
		require.NotEmpty(t, keys)
		for _, k := range keys {
			ttl, err := rdb.PTTL(ctx, k).Result()
			require.NoError(t, err)
			assert.True(t, ttl > 0 && ttl <= keep, "ttl of %s: %v", k, ttl)
		}
		waitFor(t, 3*keep, "the minutes expired", func() bool { return len(timelineKeys(t, rdb, prefix)) == 0 })
		runs, _, _ := sumMinutes(timeline(t, n, "k"))
		assert.Zero(t, runs, "after the retention")
	}
}

func TestTimelineCountsAKnownWorkloadExactly(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	checkTimelineWorkload(t, func(t *testing.T, h map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
		return newNode(t, srv, h, opts...)
	})
}

func TestTimelineSamplesPendingDepthAndOldestOverdue(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	checkTimelinePending(t, func(t *testing.T, h map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
		return newNode(t, srv, h, opts...)
	})
}

func TestTimelineRetentionExpiresAndZeroRecordsNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	checkTimelineRetention(t, client(t, srv), cluster.DefaultPrefix, func(t *testing.T, h map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
		return newNode(t, srv, h, opts...)
	})
}

func TestTimelineOnRedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	maker := func(prefix string) nodeMaker {
		return func(t *testing.T, h map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
			return newClusterNode(t, c, prefix, h, opts...)
		}
	}
	t.Run("workload", func(t *testing.T) { checkTimelineWorkload(t, maker("{tlwork}")) })
	t.Run("pending", func(t *testing.T) { checkTimelinePending(t, maker("{tlpend}")) })
	t.Run("retention", func(t *testing.T) {
		checkTimelineRetention(t, clusterClient(t, c), "{tlkeep}", maker("{tlkeep}"))
	})
}

func TestNegativeTimelineRetentionIsRefused(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	_, err := cluster.New(rdb, cluster.WithTimelineRetention(-time.Second))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "timeline retention")
}
