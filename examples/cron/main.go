// Command cron runs the example service of package reports: a daily report
// at 03:00 Europe/Berlin, a rollup every quarter hour, and a digest at 09:00
// America/New_York on weekdays, each a cron spec given to
// scheduler.Scheduler.ScheduleWithTrigger.
//
//	go run ./examples/cron             # 1 s on the real clock, then the simulations
//	go run ./examples/cron -live 20m   # stay longer on the real clock
//
// First it starts the service on the real clock, prints when each job runs
// next, and stops after -live. Then it replays three stretches of 2026 on a
// schedulertest.ManualClock, in well under a second: Berlin's spring-forward
// and fall-back weekends, where the daily report still runs once a day and
// the quarter-hourly job runs 92 and 100 times, and an outage, after which
// the missed reports are caught up while the missed rollups are coalesced
// into one run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"
	_ "time/tzdata" // the jobs' zones, even on a machine without a zone database

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/examples/cron/reports"
)

// dueLayout shows a due time with its weekday and zone abbreviation.
const dueLayout = "Mon 2006-01-02 15:04 MST"

func main() {
	live := flag.Duration("live", time.Second, "how long to run the service on the real clock")
	flag.Parse()
	log.SetFlags(0)
	if err := runLive(os.Stdout, *live); err != nil {
		log.Fatal(err)
	}
	for _, sc := range scenarios() {
		if err := simulate(os.Stdout, sc); err != nil {
			log.Fatal(err)
		}
	}
}

// runLive runs the service on the real clock for d and prints to w the next
// run times of its jobs, and each run that happens meanwhile.
func runLive(w io.Writer, d time.Duration) error {
	s, err := scheduler.New(2)
	if err != nil {
		return err
	}
	defer func() {
		s.Shutdown() // cancels the jobs' next runs; a run in progress finishes
		_ = s.AwaitTermination(context.Background())
	}()
	say := func(ctx context.Context, r reports.Run) error {
		fmt.Fprintf(w, "  ran %-14s due %s, started %s late, covers %s to %s\n", r.Job,
			r.Due.Format(dueLayout), r.Started.Sub(r.Due).Round(time.Microsecond),
			r.From.Format(dueLayout), r.To.Format(dueLayout))
		return nil
	}
	svc, err := reports.New(reports.Config{Report: say, Rollup: say, Digest: say})
	if err != nil {
		return err
	}
	if err := svc.Start(s); err != nil {
		return err
	}
	now := time.Now()
	fmt.Fprintf(w, "On the real clock, now %s:\n", now.Format(dueLayout))
	for _, st := range svc.Status() {
		j := st.Job
		fmt.Fprintf(w, "  %-14s %-16q in %-16s next in %s, then:\n", j.Name, j.Spec, j.Zone, st.NextIn.Round(time.Second))
		at := now
		for range 3 {
			at = j.Schedule.Next(at)
			fmt.Fprintf(w, "      %s  (%s here)\n", at.Format(dueLayout), at.Local().Format(dueLayout))
		}
	}
	fmt.Fprintf(w, "  running for %s...\n", d)
	time.Sleep(d)
	return nil
}
