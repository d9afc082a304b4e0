package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/examples/cron/reports"
	"github.com/go-stpe/scheduler/schedulertest"
)

// scenario is a stretch of time to replay on a manual clock.
type scenario struct {
	title      string
	start, end time.Time // the clock moves from start to end
	// sleep, if set, is a stretch inside [start, end] the machine sleeps
	// through: the clock jumps over it in one step, as after a suspend.
	sleepFrom, sleepTo time.Time
	// rollupsFrom and rollupsTo bound the quarter-hourly runs worth
	// printing one by one; the others are only counted per day.
	rollupsFrom, rollupsTo time.Time
	// moral is what the runs show.
	moral string
}

// scenarios returns the three stretches of 2026 the command replays.
func scenarios() []scenario {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err) // time/tzdata is embedded
	}
	at := func(month time.Month, day, hour, minute int) time.Time {
		return time.Date(2026, month, day, hour, minute, 0, 0, berlin)
	}
	return []scenario{
		{
			title: "Spring forward: on Sunday 2026-03-29 Berlin's clocks go from 02:00 CET to 03:00 CEST",
			start: at(3, 27, 23, 55), end: at(3, 31, 0, 0),
			rollupsFrom: at(3, 29, 1, 30), rollupsTo: at(3, 29, 3, 15),
			moral: "03:00 comes once a day, the short day too; no quarter hour between 02:00 and 03:00, which never happened.",
		},
		{
			title: "Fall back: on Sunday 2026-10-25 Berlin's clocks go from 03:00 CEST back to 02:00 CET",
			start: at(10, 23, 23, 55), end: at(10, 27, 0, 0),
			rollupsFrom: at(10, 25, 1, 45), rollupsTo: at(10, 25, 3, 0),
			moral: "03:00 comes once; the quarter hours from 02:00 to 03:00 come twice, as they happened twice.",
		},
		{
			title: "An outage: the machine sleeps from Friday 2026-03-27 23:50 to Monday 2026-03-30 23:50, over the spring-forward night",
			start: at(3, 27, 23, 50), end: at(3, 31, 0, 30),
			sleepFrom: at(3, 28, 0, 0), sleepTo: at(3, 30, 23, 50),
			rollupsFrom: at(3, 27, 23, 50), rollupsTo: at(3, 31, 0, 30),
			moral: "Each missed report is caught up (CatchUpMissed); one rollup covers the whole outage (CoalesceMissed).",
		},
	}
}

// simulate runs the service on a manual clock through sc and prints its
// runs in the order they were due.
func simulate(w io.Writer, sc scenario) error {
	var mu sync.Mutex // guards runs
	var runs []reports.Run
	record := func(ctx context.Context, r reports.Run) error {
		mu.Lock()
		defer mu.Unlock()
		runs = append(runs, r)
		return nil
	}
	svc, err := reports.New(reports.Config{Report: record, Rollup: record, Digest: record})
	if err != nil {
		return err
	}
	clk := schedulertest.NewManualClock(sc.start)
	s, err := scheduler.New(2, scheduler.WithClock(clk))
	if err != nil {
		return err
	}
	defer func() {
		s.ShutdownNow()
		_ = s.AwaitTermination(context.Background())
	}()
	if err := svc.Start(s); err != nil {
		return err
	}
	ctx := context.Background()
	if err := advance(ctx, clk, s, sc); err != nil {
		return err
	}

	// AwaitIdle has returned: every run is done and visible here.
	slices.SortStableFunc(runs, func(a, b reports.Run) int {
		return cmp.Or(a.Due.Compare(b.Due), cmp.Compare(a.Job, b.Job))
	})
	loc := sc.start.Location()
	fmt.Fprintf(w, "\n%s\n(simulated from %s to %s)\n", sc.title, sc.start.Format(dueLayout), sc.end.Format(dueLayout))
	perDay := make(map[string]int)
	var days []string
	for _, r := range runs {
		if r.Job == reports.QuarterHourly {
			day := r.Due.In(loc).Format("Mon 01-02")
			if perDay[day] == 0 {
				days = append(days, day)
			}
			perDay[day]++
			if r.Due.Before(sc.rollupsFrom) || r.Due.After(sc.rollupsTo) {
				continue
			}
		}
		fmt.Fprintf(w, "  %-14s due %s", r.Job, r.Due.Format(dueLayout))
		if late := r.Started.Sub(r.Due); late > 0 {
			fmt.Fprintf(w, ", ran %s late", duration(late))
		}
		fmt.Fprintf(w, ", covers %s (%s)\n", span(r), duration(r.To.Sub(r.From)))
	}
	counts := make([]string, len(days))
	for i, day := range days {
		counts[i] = fmt.Sprintf("%s %d", day, perDay[day])
	}
	fmt.Fprintf(w, "  %s runs per Berlin day: %s\n", reports.QuarterHourly, strings.Join(counts, ", "))
	fmt.Fprintf(w, "  %s\n", sc.moral)
	return nil
}

// advance moves clk through sc the way real time would, from timer to
// timer, but jumps over sc's sleep in one step.
func advance(ctx context.Context, clk *schedulertest.ManualClock, s *scheduler.Scheduler, sc scenario) error {
	if !sc.sleepFrom.IsZero() {
		if err := schedulertest.AdvanceAndSettle(ctx, clk, s, sc.sleepFrom.Sub(clk.Now())); err != nil {
			return err
		}
		clk.Set(sc.sleepTo) // the wake-up: every run of the night is overdue at once
		if err := s.AwaitIdle(ctx); err != nil {
			return err
		}
	}
	return schedulertest.AdvanceAndSettle(ctx, clk, s, sc.end.Sub(clk.Now()))
}

// span formats r's span: a day for the report, else from and to.
func span(r reports.Run) string {
	if r.Job == reports.DailyReport {
		return "the day " + r.From.Format("Mon 2006-01-02")
	}
	return r.From.Format("Mon 15:04 MST") + " to " + r.To.Format("Mon 15:04 MST")
}

// duration formats d without its zero minutes and seconds: 24h, 70h45m.
func duration(d time.Duration) string {
	s := strings.TrimSuffix(d.String(), "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
