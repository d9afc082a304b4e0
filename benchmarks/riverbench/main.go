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
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
)

func main() {
	inserts := flag.Int("inserts", 20000, "jobs inserted by each insert-rate run")
	goroutines := flag.Int("goroutines", 16, "goroutines of the insert-rate runs")
	rate := flag.Int("rate", 1000, "jobs per second of the lateness runs")
	duration := flag.Duration("duration", 10*time.Second, "length of each lateness run")
	ahead := flag.Duration("ahead", 2*time.Second, "how far ahead the scheduled lateness run schedules its jobs")
	passes := flag.Int("passes", 1, "passes of every run, interleaved (River, then the Store, in each)")
	only := flag.String("only", "insert,lateness,takeover", "the runs to make, of insert, lateness and takeover")
	cpuProfile := flag.String("cpuprofile", "", "write the harness's CPU profile to this file")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof on this address while running")
	flag.Parse()
	if *pprofAddr != "" {
		go func() { log.Print(http.ListenAndServe(*pprofAddr, nil)) }()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	c := config{inserts: *inserts, goroutines: *goroutines, rate: *rate, duration: *duration, ahead: *ahead}
	if err := run(c, *passes, strings.Split(*only, ",")); err != nil {
		log.Print(err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// config is the flags of the runs.
type config struct {
	inserts, goroutines, rate int
	duration, ahead           time.Duration
}

func run(c config, passes int, only []string) error {
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
	fmt.Printf("PostgreSQL from %s on port %d (fsync off)\n", bin, srv.Port)
	for pass := 1; pass <= passes; pass++ {
		fmt.Printf("\npass %d of %d\n", pass, passes)
		for _, what := range only {
			var err error
			switch what {
			case "insert":
				err = insertRuns(ctx, srv, c)
			case "lateness":
				err = latenessRuns(ctx, srv, c)
			case "takeover":
				err = takeoverRuns(ctx, srv, c)
			default:
				extra, ok := extraRuns[what]
				if !ok {
					return fmt.Errorf("riverbench: -only %q: want insert, lateness, takeover or one of the runs built with tags", what)
				}
				err = extra(ctx, srv, c)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// extraRuns are the runs files built with tags add (clusternode.go), by
// their -only name.
var extraRuns = map[string]func(ctx context.Context, srv *pgserver.Server, c config) error{}

// load is the machine's load average over the last minute, from
// /proc/loadavg ("?" where it cannot be read).
func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return "load " + f[0]
	}
	return "load ?"
}

// insertRuns measures the insert rates: one per call from c.goroutines
// goroutines (the Store with and without its insert notices), and in
// batches.
func insertRuns(ctx context.Context, srv *pgserver.Server, c config) error {
	r, err := riverInsertRate(ctx, srv, c.inserts, c.goroutines)
	if err != nil {
		return err
	}
	fmt.Printf("River Client.Insert, %d goroutines: %d jobs in %v: %.0f jobs/s (%s)\n", c.goroutines, c.inserts, r.elapsed.Round(time.Millisecond), r.perSecond(), load())
	for _, notices := range []bool{true, false} {
		r, err = storeInsertRate(ctx, srv, c.inserts, c.goroutines, notices)
		if err != nil {
			return err
		}
		what := ""
		if !notices {
			what = " (insert trigger disabled: the notices' cost)"
		}
		fmt.Printf("pgdriver Store.Schedule%s, %d goroutines: %d tasks in %v: %.0f tasks/s (%s)\n", what, c.goroutines, c.inserts, r.elapsed.Round(time.Millisecond), r.perSecond(), load())
	}
	r, err = riverInsertManyRate(ctx, srv, c.inserts)
	if err != nil {
		return err
	}
	fmt.Printf("River Client.InsertMany of %d, 1 goroutine: %d jobs in %v: %.0f jobs/s (%s)\n", manyChunk, c.inserts, r.elapsed.Round(time.Millisecond), r.perSecond(), load())
	r, err = storeScheduleManyRate(ctx, srv, c.inserts)
	if err != nil {
		return err
	}
	fmt.Printf("pgdriver Store.ScheduleMany of %d, 1 goroutine: %d tasks in %v: %.0f tasks/s (%s)\n", manyChunk, c.inserts, r.elapsed.Round(time.Millisecond), r.perSecond(), load())
	return nil
}

// latenessRuns measures the start lateness of jobs available at once and
// scheduled c.ahead.
func latenessRuns(ctx context.Context, srv *pgserver.Server, c config) error {
	for _, a := range []time.Duration{0, c.ahead} {
		what := "available at once"
		if a > 0 {
			what = fmt.Sprintf("scheduled %v ahead", a)
		}
		for _, shortest := range []bool{false, true} {
			l, err := riverLateness(ctx, srv, c.rate, c.duration, a, shortest)
			if err != nil {
				return err
			}
			settings := "defaults"
			if shortest {
				settings = "FetchCooldown and FetchPollInterval 1 ms"
			}
			fmt.Printf("River start lateness (%s), %d jobs/s for %v, %s: %s (%s)\n", settings, c.rate, c.duration, what, l, load())
		}
		for _, batch := range []bool{false, true} {
			l, err := storeLateness(ctx, srv, c.rate, c.duration, a, batch)
			if err != nil {
				return err
			}
			claims := "a claim per task"
			if batch {
				claims = "claims in batches, ClaimDue"
			}
			fmt.Printf("pgdriver Store start lateness, %d nodes (a Listener and a window each, %s), %d tasks/s for %v, %s: %s (%s)\n", storeNodes, claims, c.rate, c.duration, what, l, load())
		}
	}
	return nil
}

// insertRun is the result of an insert-rate run.
type insertRun struct {
	n       int
	elapsed time.Duration
}

func (r insertRun) perSecond() float64 { return float64(r.n) / r.elapsed.Seconds() }
