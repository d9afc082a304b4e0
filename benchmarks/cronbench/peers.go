package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/adhocore/gronx"
	gocron "github.com/go-co-op/gocron/v2"
	"github.com/go-stpe/scheduler/cron"
	"github.com/jonboulle/clockwork"
	nrcron "github.com/netresearch/go-cron"
	robfig "github.com/robfig/cron/v3"
)

// peer is one cron library under test: runs returns the first n run times
// it computes for a five-field spec read in loc, after from.
type peer struct {
	name string
	runs func(spec string, loc *time.Location, from time.Time, n int) ([]time.Time, error)
}

// peers are the libraries the comparison measures, ours first.
var peers = []peer{
	{"go-stpe/scheduler/cron", chained(func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		s, err := cron.Parse(spec, cron.In(loc))
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	})},
	{"robfig/cron v3.0.1", chained(func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		s, err := robfig.ParseStandard("CRON_TZ=" + loc.String() + " " + spec)
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	})},
	{"netresearch/go-cron v0.9.1", chained(func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		s, err := nrcron.ParseStandard("CRON_TZ=" + loc.String() + " " + spec)
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	})},
	{"adhocore/gronx v1.20.4", chained(func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		if !gronx.IsValid(spec) {
			return nil, fmt.Errorf("gronx: invalid spec %q", spec)
		}
		return func(t time.Time) time.Time {
			next, err := gronx.NextTickAfter(spec, t.In(loc), false)
			if err != nil {
				return time.Time{}
			}
			return next
		}, nil
	})},
	{"gocron v2.21.2, DST policy default", gocronRuns(gocron.DaylightSavingsTimeDefault)},
	{"gocron v2.21.2, DaylightSavingsTimeSkip", gocronRuns(gocron.DaylightSavingsTimeSkip)},
	{"gocron v2.21.2, DaylightSavingsTimeRunAfterTransition", gocronRuns(gocron.DaylightSavingsTimeRunAfterTransition)},
}

// chained turns a library's Next into peer.runs: each run is Next of the
// one before, as a scheduler asks.
func chained(parse func(spec string, loc *time.Location) (func(time.Time) time.Time, error)) func(string, *time.Location, time.Time, int) ([]time.Time, error) {
	return func(spec string, loc *time.Location, from time.Time, n int) ([]time.Time, error) {
		next, err := parse(spec, loc)
		if err != nil {
			return nil, err
		}
		var out []time.Time
		for range n {
			from = next(from)
			out = append(out, from)
		}
		return out, nil
	}
}

// gocronRuns asks a gocron scheduler, on a fake clock set to from and in
// loc, for the next n runs of a cron job with the given DST policy
// (Job.NextRuns): gocron's DST handling lives in its job, not in the
// robfig/cron parser it uses.
func gocronRuns(policy gocron.DaylightSavingsTimePolicy) func(string, *time.Location, time.Time, int) ([]time.Time, error) {
	return func(spec string, loc *time.Location, from time.Time, n int) ([]time.Time, error) {
		s, err := gocron.NewScheduler(gocron.WithClock(clockwork.NewFakeClockAt(from)), gocron.WithLocation(loc))
		if err != nil {
			return nil, err
		}
		defer func() { _ = s.Shutdown() }()
		job, err := s.NewJob(gocron.CronJob(spec, false), gocron.NewTask(func() {}), gocron.WithDaylightSavingsTimePolicy(policy))
		if err != nil {
			return nil, err
		}
		s.Start()
		// Start schedules the job on the scheduler's goroutine: wait for
		// its first run time to appear.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for {
			if next, err := job.NextRun(); err == nil && !next.IsZero() {
				break
			}
			select {
			case <-ctx.Done():
				return nil, errors.New("gocron: the job was not scheduled within 10s")
			case <-time.After(time.Millisecond):
			}
		}
		return job.NextRuns(n)
	}
}
