// Command benchmarks compares the scheduler with time.AfterFunc, gocron v2
// and go-quartz on the workloads of the root package's bench_test.go, and
// writes the results: results/results.md (the table) and the charts
// results/lateness.png and results/throughput.png.
//
// Run it from this folder:
//
//	go run .            # the full sizes, a few minutes
//	go run . -quick     # a tenth of every size, a smoke test
//	go run . -precise   # only the precise-timing comparison (precise.go)
//
// It is its own module so that the library does not depend on the peers
// or on gonum/plot.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "results", "folder to write results.md and the charts into")
	quick := flag.Bool("quick", false, "run every workload at a tenth of its size (a smoke test; the numbers are not for publishing)")
	runs := flag.Int("runs", 3, "run every workload this many times and report the median")
	precise := flag.Bool("precise", false, "run only the precise-timing comparison (results/precise.md, results/precise-lateness.png)")
	flag.Parse()
	log.SetFlags(0)
	if *precise {
		if err := runPrecise(*out, max(*runs, 1)); err != nil {
			log.Fatal(err)
		}
		return
	}

	scale := 1
	if *quick {
		scale = 10
	}
	start := time.Now()
	var results []*result
	for _, p := range peers(scale) {
		var rs []*result
		for range max(*runs, 1) {
			r := &result{peer: p}
			for _, w := range []struct {
				name string
				run  func(peer, *result) error
			}{
				{"queue", runQueue},
				{"fire", runFire},
				{"periodic", runPeriodic},
				{"lateness", runLateness},
			} {
				t0 := time.Now()
				if err := w.run(p, r); err != nil {
					log.Fatalf("%s, %s: %v", p.label, w.name, err)
				}
				log.Printf("%-10s %-9s %6.1fs", p.label, w.name, time.Since(t0).Seconds())
				runtime.GC() // leave nothing behind for the next workload
			}
			rs = append(rs, r)
		}
		results = append(results, median(rs))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	md := filepath.Join(*out, "results.md")
	if err := os.WriteFile(md, []byte(markdown(results, machine(), *quick, *runs)), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := plotLateness(results, filepath.Join(*out, "lateness.png")); err != nil {
		log.Fatal(err)
	}
	if err := plotThroughput(results, filepath.Join(*out, "throughput.png")); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s and the charts in %.0fs", md, time.Since(start).Seconds())
}

// machine describes where the numbers come from.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		model = cpuModel(string(b))
	}
	versions := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/go-co-op/gocron/v2", "github.com/reugn/go-quartz":
				versions += fmt.Sprintf(", %s %s", d.Path, d.Version)
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs (GOMAXPROCS %d), %s %s/%s%s; %s",
		model, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		versions, time.Now().UTC().Format("2006-01-02"))
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
