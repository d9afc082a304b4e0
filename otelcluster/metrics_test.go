package otelcluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster"
	"github.com/go-stpe/scheduler/otelcluster/internal/redisserver"
	"github.com/redis/go-redis/v9"
)

// TestRunMetricsByKindAndOutcome runs two tasks that succeed, one that
// fails twice (one retry) and goes dead, and one that passes its time
// limit with no retry, and finds every count by kind and outcome.
func TestRunMetricsByKindAndOutcome(t *testing.T) {
	e := newEnv(t, map[string]cluster.Handler{
		"mail":   ok,
		"report": func(context.Context, cluster.Task) error { return errors.New("upstream unavailable") },
	}, nil)
	require.NoError(t, e.n.Handle("slow", func(ctx context.Context, _ cluster.Task) error {
		<-ctx.Done()
		return ctx.Err()
	}, cluster.WithTaskTimeout(50*time.Millisecond)))
	e.start(t)
	ctx := context.Background()
	e.schedule(t, ctx, "mail")
	e.schedule(t, ctx, "mail")
	e.schedule(t, ctx, "report", cluster.WithTaskMaxRetries(1))
	e.schedule(t, ctx, "slow", cluster.WithTaskMaxRetries(0))
	e.waitEnded(t, 5)

	m := e.collect(t)
	assert.Equal(t, map[string]int64{
		"scheduler.cluster.task.kind=mail":   2,
		"scheduler.cluster.task.kind=report": 1,
		"scheduler.cluster.task.kind=slow":   1,
	}, sums(t, m["scheduler.cluster.task.scheduled"]))
	assert.Equal(t, map[string]int64{
		"scheduler.cluster.task.kind=mail":   2,
		"scheduler.cluster.task.kind=report": 2,
		"scheduler.cluster.task.kind=slow":   1,
	}, sums(t, m["scheduler.cluster.task.claimed"]))
	runs := map[string]int64{
		"scheduler.cluster.run.outcome=succeeded,scheduler.cluster.task.kind=mail": 2,
		"scheduler.cluster.run.outcome=failed,scheduler.cluster.task.kind=report":  2,
		"scheduler.cluster.run.outcome=timed_out,scheduler.cluster.task.kind=slow": 1,
	}
	assert.Equal(t, runs, sums(t, m["scheduler.cluster.task.runs"]))
	durations := map[string]uint64{}
	for k, v := range runs {
		durations[k] = uint64(v)
	}
	assert.Equal(t, durations, counts(t, m["scheduler.cluster.task.run.duration"]))
	assert.Equal(t, map[string]int64{
		"scheduler.cluster.task.kind=report": 1,
		"scheduler.cluster.task.kind=slow":   1,
	}, sums(t, m["scheduler.cluster.task.dead"]))
	assert.Equal(t, map[string]uint64{
		"scheduler.cluster.task.kind=mail":   2,
		"scheduler.cluster.task.kind=report": 2,
		"scheduler.cluster.task.kind=slow":   1,
	}, counts(t, m["scheduler.cluster.task.run.lateness"]))

	redisCalls := counts(t, m["db.client.operation.duration"])
	for script, atLeast := range map[string]uint64{"schedule": 4, "claim": 5, "complete": 2, "fail": 3, "members": 1} {
		key := "db.operation.name=EVALSHA,db.stored_procedure.name=" + script + ",db.system.name=redis"
		assert.GreaterOrEqual(t, redisCalls[key], atLeast, "calls of the %s script: %v", script, redisCalls)
	}
}

// TestRedisErrorsCarryTheirClass flushes Redis's script cache: the next
// Schedule's EVALSHA fails with NOSCRIPT, which is recorded with its class,
// and go-redis sends the script itself (EVAL).
func TestRedisErrorsCarryTheirClass(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.schedule(t, context.Background(), "mail") // caches the script (node not started: no other calls)
	before := counts(t, e.collect(t)["db.client.operation.duration"])
	require.NoError(t, e.rdb.ScriptFlush(context.Background()).Err())
	e.schedule(t, context.Background(), "mail")

	calls := counts(t, e.collect(t)["db.client.operation.duration"])
	noscript := "db.operation.name=EVALSHA,db.response.status_code=NOSCRIPT,db.stored_procedure.name=schedule,db.system.name=redis,error.type=NOSCRIPT"
	eval := "db.operation.name=EVAL,db.stored_procedure.name=schedule,db.system.name=redis"
	assert.Equal(t, uint64(1), calls[noscript]-before[noscript], "%v", calls)
	assert.Equal(t, uint64(1), calls[eval]-before[eval], "%v", calls)
}

// TestGaugesReadTheNodesStats: with one task running and one waiting in
// the window, the gauges read 1 and 1.
func TestGaugesReadTheNodesStats(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	e := newEnv(t, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		started <- struct{}{}
		<-release
		return nil
	}}, nil)
	t.Cleanup(func() { close(release) }) // runs before the node's StopNow (cleanups run last first), which waits for the handler
	e.start(t)
	ctx := context.Background()
	e.schedule(t, ctx, "k")
	_, err := e.n.Schedule(ctx, "k", nil, time.Now().Add(4*time.Second)) // within the window of 5 s
	require.NoError(t, err)
	<-started

	m := e.collect(t)
	assert.Equal(t, map[string]int64{"": 1}, sums(t, m["scheduler.cluster.task.active"]))
	assert.Equal(t, map[string]int64{"": 1}, sums(t, m["scheduler.cluster.window.length"]))
}

// TestKindsBeyondTheBoundAreOther: with WithMaxKinds(1) the second kind
// scheduled is counted as "other".
func TestKindsBeyondTheBoundAreOther(t *testing.T) {
	e := newEnv(t, nil, []otelcluster.Option{otelcluster.WithMaxKinds(1)})
	ctx := context.Background()
	e.schedule(t, ctx, "first")
	e.schedule(t, ctx, "second")
	e.schedule(t, ctx, "third")
	assert.Equal(t, map[string]int64{
		"scheduler.cluster.task.kind=first": 1,
		"scheduler.cluster.task.kind=other": 2,
	}, sums(t, e.collect(t)["scheduler.cluster.task.scheduled"]))
}

func TestBadOptionsAndRegistrationsAreInvalidArguments(t *testing.T) {
	_, err := otelcluster.New(nil)
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = otelcluster.New(otelcluster.WithMaxKinds(-1))
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	assert.EqualError(t, err, "otelcluster: WithMaxKinds(-1): scheduler: invalid argument")

	e := newEnv(t, nil, nil)
	assert.ErrorIs(t, e.inst.Register(nil), scheduler.ErrInvalidArgument)
	assert.ErrorIs(t, e.inst.Register(e.n), scheduler.ErrInvalidArgument, "twice")
	require.NoError(t, e.inst.Shutdown())
	require.NoError(t, e.inst.Shutdown(), "a second Shutdown does nothing")
	assert.ErrorIs(t, e.inst.Register(e.n), scheduler.ErrInvalidArgument, "after Shutdown")
}

// TestShutdownStopsReporting: after Shutdown a task scheduled, claimed and
// run is not counted, and the gauges are gone.
func TestShutdownStopsReporting(t *testing.T) {
	e := newEnv(t, map[string]cluster.Handler{"mail": ok}, nil)
	e.start(t)
	e.schedule(t, context.Background(), "mail")
	e.waitEnded(t, 1)
	require.NoError(t, e.inst.Shutdown())
	e.schedule(t, context.Background(), "mail")
	e.waitEnded(t, 1)

	m := e.collect(t)
	assert.Equal(t, map[string]int64{"scheduler.cluster.task.kind=mail": 1}, sums(t, m["scheduler.cluster.task.scheduled"]))
	assert.Equal(t, map[string]int64{"scheduler.cluster.run.outcome=succeeded,scheduler.cluster.task.kind=mail": 1},
		sums(t, m["scheduler.cluster.task.runs"]))
	_, hasActive := m["scheduler.cluster.task.active"]
	assert.False(t, hasActive, "gauges unregistered")
	assert.Len(t, e.spans.Ended(), 1, "no span for the run after Shutdown")
}

// TestNewNodeIsInstrumentedAndRegistered: NewNode's node reports what it
// schedules, and its gauges are registered.
func TestNewNodeIsInstrumentedAndRegistered(t *testing.T) {
	addr := redisserver.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	n, inst, err := otelcluster.NewNode(rdb, nodeOptions(), otelcluster.WithMeterProvider(mp))
	require.NoError(t, err)
	defer inst.Shutdown()
	defer n.StopNow()
	_, err = n.Schedule(context.Background(), "mail", nil, time.Now())
	require.NoError(t, err)

	e := &env{reader: reader}
	m := e.collect(t)
	assert.Equal(t, map[string]int64{"scheduler.cluster.task.kind=mail": 1}, sums(t, m["scheduler.cluster.task.scheduled"]))
	assert.Equal(t, map[string]int64{"": 0}, sums(t, m["scheduler.cluster.window.length"]), "not started: nothing loaded")

	_, _, err = otelcluster.NewNode(nil, nil, otelcluster.WithMeterProvider(mp))
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, "cluster.New's error")
}
