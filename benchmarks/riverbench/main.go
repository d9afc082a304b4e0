// Command riverbench measures River (v0.51.2, riverpgxv5) on a PostgreSQL
// it starts itself (pgserver: initdb in a temporary directory, a free
// loopback port, fsync off), beside the Postgres driver's Store:
//
//   - insert rate: jobs inserted one per call from -goroutines goroutines,
//     River's Client.Insert and the Store's Schedule, each on a fresh
//     database;
//   - start lateness at -rate jobs a second for -duration: how late each
//     job's worker starts after the job became available, for jobs
//     available at once and for jobs scheduled -ahead in the future (which
//     River's leader moves to available every 5 s); beside each, the
//     Store's at the same rate, run by three nodes, each with a Listener
//     and an in-memory window that claims each task at its due time
//     (storelateness.go).
//
// Run it with GOWORK=off (its own module, for River's Go 1.26):
//
//	cd benchmarks/riverbench && GOWORK=off go run . -inserts 20000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
)

func main() {
	inserts := flag.Int("inserts", 20000, "jobs inserted by each insert-rate run")
	goroutines := flag.Int("goroutines", 16, "goroutines of the insert-rate runs")
	rate := flag.Int("rate", 1000, "jobs per second of the lateness runs")
	duration := flag.Duration("duration", 10*time.Second, "length of each lateness run")
	ahead := flag.Duration("ahead", 2*time.Second, "how far ahead the scheduled lateness run schedules its jobs")
	flag.Parse()
	if err := run(*inserts, *goroutines, *rate, *duration, *ahead); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

func run(inserts, goroutines, rate int, duration, ahead time.Duration) error {
	bin := pgserver.BinDir()
	if bin == "" {
		return fmt.Errorf("riverbench: %s", pgserver.InstallHint)
	}
	srv, err := pgserver.Launch(bin)
	if err != nil {
		return err
	}
	defer srv.Stop()
	ctx := context.Background()
	fmt.Printf("PostgreSQL from %s on port %d (fsync off)\n\n", bin, srv.Port)

	r, err := riverInsertRate(ctx, srv, inserts, goroutines)
	if err != nil {
		return err
	}
	fmt.Printf("River Client.Insert, %d goroutines: %d jobs in %v: %.0f jobs/s\n", goroutines, inserts, r.elapsed.Round(time.Millisecond), r.perSecond())
	r, err = storeInsertRate(ctx, srv, inserts, goroutines)
	if err != nil {
		return err
	}
	fmt.Printf("pgdriver Store.Schedule, %d goroutines: %d tasks in %v: %.0f tasks/s\n\n", goroutines, inserts, r.elapsed.Round(time.Millisecond), r.perSecond())

	for _, a := range []time.Duration{0, ahead} {
		l, err := riverLateness(ctx, srv, rate, duration, a)
		if err != nil {
			return err
		}
		what := "available at once"
		if a > 0 {
			what = fmt.Sprintf("scheduled %v ahead", a)
		}
		fmt.Printf("River start lateness, %d jobs/s for %v, %s: %s\n", rate, duration, what, l)
		l, err = storeLateness(ctx, srv, rate, duration, a)
		if err != nil {
			return err
		}
		fmt.Printf("pgdriver Store start lateness, %d nodes (a Listener and a window each), %d tasks/s for %v, %s: %s\n", storeNodes, rate, duration, what, l)
	}
	return nil
}

// insertRun is the result of an insert-rate run.
type insertRun struct {
	n       int
	elapsed time.Duration
}

func (r insertRun) perSecond() float64 { return float64(r.n) / r.elapsed.Seconds() }
