package cluster_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capture is a slog.Handler that keeps every record, for tests that check
// what a node logs.
type capture struct {
	mu      sync.Mutex // guards records
	records []slog.Record
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *capture) WithGroup(string) slog.Handler            { return c }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}

// unhandled returns the attributes of each warning about a kind no live
// node handles, in the order logged.
func (c *capture) unhandled() []map[string]slog.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]slog.Value
	for _, r := range c.records {
		if r.Level != slog.LevelWarn || r.Message != "cluster: no live node handles this kind; its tasks wait pending until a node that handles it starts" {
			continue
		}
		attrs := map[string]slog.Value{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value
			return true
		})
		out = append(out, attrs)
	}
	return out
}

// warnedKinds counts the warnings by kind.
func (c *capture) warnedKinds() map[string]int {
	out := map[string]int{}
	for _, w := range c.unhandled() {
		out[w["kind"].String()]++
	}
	return out
}

func TestNodeWarnsOncePerIntervalAboutAKindNoLiveNodeHandles(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	// B handles "busy" on one worker, held by its first task: the second
	// waits due, but a live node handles its kind, so it is no warning.
	busyStarted := make(chan cluster.Task, 2)
	b := newNode(t, srv, map[string]cluster.Handler{"busy": blocking(busyStarted)}, cluster.WithConcurrency(1))
	start(t, b)
	for range 2 {
		_, err := b.Schedule(ctx, "busy", nil, time.Now())
		require.NoError(t, err)
	}
	recv(t, busyStarted, 10*time.Second, "the busy run")

	logs := &capture{}
	a := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error { return nil }},
		cluster.WithLogger(slog.New(logs)), cluster.WithUnhandledKindWarning(time.Hour))
	producer := newNode(t, srv, nil)
	for range 3 {
		_, err := producer.Schedule(ctx, "orphan-a", nil, time.Now())
		require.NoError(t, err)
	}
	start(t, a) // its first sweep sees the three
	waitFor(t, 10*time.Second, "the warning about orphan-a", func() bool { return logs.warnedKinds()["orphan-a"] > 0 })
	w := logs.unhandled()[0]
	assert.Equal(t, "orphan-a", w["kind"].String())
	assert.Equal(t, int64(3), w["waiting"].Int64(), "how many wait")

	// A later kind's warning needs a later sweep, which finds orphan-a
	// still waiting and says nothing about it: once per interval.
	_, err := producer.Schedule(ctx, "orphan-b", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the warning about orphan-b", func() bool { return logs.warnedKinds()["orphan-b"] > 0 })
	_, err = producer.Schedule(ctx, "orphan-c", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the warning about orphan-c", func() bool { return logs.warnedKinds()["orphan-c"] > 0 })
	assert.Equal(t, map[string]int{"orphan-a": 1, "orphan-b": 1, "orphan-c": 1}, logs.warnedKinds(),
		"each kind once, and never the kinds a live node handles")
	assert.Equal(t, cluster.Counts{Pending: 6, Running: 1}, counts(t, a), "nothing unhandled is dropped")
}

func TestNodeWarnsAgainAfterTheInterval(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	logs := &capture{}
	// An interval shorter than the sweep: every sweep warns again.
	a := newNode(t, srv, nil, cluster.WithLogger(slog.New(logs)), cluster.WithUnhandledKindWarning(time.Nanosecond))
	start(t, a)
	_, err := a.Schedule(context.Background(), "orphan", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "two warnings about orphan", func() bool { return logs.warnedKinds()["orphan"] >= 2 })
}
