package scheduler_test

// Recorders the external tests share: values collected from tasks and
// hooks, the RunInfo of every run, the Due of each run, a log the workers
// write into, and a rejection policy that records what it is handed.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// recorder collects values from tasks and hooks, safe for concurrent use.
type recorder[T any] struct {
	mu    sync.Mutex // guards items
	items []T
}

func (r *recorder[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, v)
}

func (r *recorder[T]) get() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.items)
}

func (r *recorder[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

// observed collects the RunInfo of every run, through the Observe hook.
type observed struct{ recorder[scheduler.RunInfo] }

// hooks returns the option that installs o's Observe hook.
func (o *observed) hooks() scheduler.Option {
	return scheduler.WithHooks(scheduler.Hooks{Observe: o.add})
}

// dueRecorder is a task that records the Due of each of its runs, as
// CurrentRun reports it, as an offset from epoch.
type dueRecorder struct{ recorder[time.Duration] }

func (r *dueRecorder) task(ctx context.Context) error {
	info, ok := scheduler.CurrentRun(ctx)
	if !ok {
		return errors.New("CurrentRun: no run")
	}
	r.add(info.Due.Sub(epoch))
	return nil
}

// logBuffer is an io.Writer for a slog handler, safe for the
// scheduler's workers to write into while the test reads it.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// newLogger returns a JSON logger writing into a logBuffer.
func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, nil)), b
}

// requireErrorRecord fails unless one record was logged at level Error whose
// text contains every one of want.
func (b *logBuffer) requireErrorRecord(t *testing.T, want ...string) {
	t.Helper()
	b.mu.Lock()
	text := b.buf.String()
	b.mu.Unlock()
	for line := range strings.Lines(text) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "log line %q", line)
		if rec[slog.LevelKey] != slog.LevelError.String() {
			continue
		}
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
			return
		}
	}
	t.Fatalf("no record at level ERROR containing %q in the log:\n%s", want, text)
}

// recordingPolicy is a RejectionPolicy that records the futures it is
// handed and the goroutine of each call, then returns what then returns
// (nil, leaving the future undone, when then is nil).
type recordingPolicy struct {
	got     recorder[scheduler.ScheduledFuture]
	callers recorder[uint64] // goroutineID of each call
	then    func(s *scheduler.Scheduler, f scheduler.ScheduledFuture) error
}

func (p *recordingPolicy) Rejected(s *scheduler.Scheduler, f scheduler.ScheduledFuture) error {
	p.got.add(f)
	p.callers.add(goroutineID())
	if p.then != nil {
		return p.then(s, f)
	}
	return nil
}
