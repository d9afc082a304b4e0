package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var schedulerErrInvalidArgument = scheduler.ErrInvalidArgument

func TestBadInputIsInvalidArgumentAndStoresNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ok := func(context.Context, cluster.Task) error { return nil }
	n := newNode(t, srv, map[string]cluster.Handler{"k": ok}, cluster.WithMaxPayload(16))
	ctx := context.Background()
	every := scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Add(time.Second) })

	_, err := cluster.New(nil)
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, "nil client")
	for name, o := range map[string]cluster.Option{
		"concurrency": cluster.WithConcurrency(0),
		"lease":       cluster.WithLease(0),
		"sweep":       cluster.WithSweepInterval(time.Hour),
		"retries":     cluster.WithMaxRetries(-1),
		"prefix":      cluster.WithPrefix(""),
		"nil option":  nil,
		"nil clock":   cluster.WithClock(nil),
		"nil logger":  cluster.WithLogger(nil),
		"nil backoff": cluster.WithBackoff(nil),
		"lost runs":   cluster.WithMaxLostRuns(0),
	} {
		_, err := cluster.New(client(t, srv), o)
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
	}

	for name, err := range map[string]error{
		"nil handler":       n.Handle("other", nil),
		"duplicate kind":    n.Handle("k", ok),
		"empty kind":        n.Handle("", ok),
		"kind with space":   n.Handle("a b", ok),
		"reserved @ prefix": n.Handle("@k", ok),
		"nil trigger":       n.Periodic("p", nil, ok),
		"nil periodic h":    n.Periodic("p", every, nil),
		"bad periodic name": n.Periodic("p q", every, ok),
		"nil handle option": n.Handle("other", ok, nil),
		"nil periodic opt":  n.Periodic("p", every, ok, nil),
	} {
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
	}
	require.NoError(t, n.Periodic("p", every, ok))
	assert.ErrorIs(t, n.Periodic("p", every, ok), scheduler.ErrInvalidArgument, "periodic declared twice")

	now := time.Now()
	for name, call := range map[string]func() error{
		"unknown kind, strict": func() error {
			_, err := newNode(t, srv, nil, cluster.WithStrictKinds()).Schedule(ctx, "nobody", nil, now)
			return err
		},
		"periodic kind":     func() error { _, err := n.Schedule(ctx, "@p", nil, now); return err },
		"oversized payload": func() error { _, err := n.Schedule(ctx, "k", make([]byte, 17), now); return err },
		"zero due time":     func() error { _, err := n.Schedule(ctx, "k", nil, time.Time{}); return err },
		"negative retries": func() error {
			_, err := n.Schedule(ctx, "k", nil, now, cluster.WithTaskMaxRetries(-1))
			return err
		},
		"huge ID": func() error {
			_, err := n.Schedule(ctx, "k", nil, now, cluster.WithID(strings.Repeat("x", 513)))
			return err
		},
		"empty cancel ID": func() error { _, err := n.Cancel(ctx, ""); return err },
		"nil schedule option": func() error {
			_, err := n.Schedule(ctx, "k", nil, now, nil)
			return err
		},
	} {
		err := call()
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
		if err != nil {
			t.Logf("%s: %v", name, err)
			assert.True(t, strings.HasPrefix(err.Error(), "cluster: "), "message shape: %v", err)
		}
	}
	assert.Equal(t, cluster.Counts{}, counts(t, n), "bad input stored nothing")

	_, err = n.Schedule(ctx, "k", make([]byte, 16), now)
	assert.NoError(t, err, "a payload at the limit is fine")

	start(t, n)
	assert.ErrorIs(t, n.Start(ctx), cluster.ErrStopped, "second Start")
	assert.ErrorIs(t, n.Periodic("late", every, ok), scheduler.ErrInvalidArgument, "periodic after Start")
}
