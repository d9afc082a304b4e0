package main

// The precise-timing comparison (`go run . -precise`): start
// lateness of time.AfterFunc, the scheduler and the scheduler with
// WithPreciseTiming on the two loads of the root package's
// BenchmarkPreciseLateness, with the CPU each used, written to
// results/precise.md and the chart results/precise-lateness.png.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/benchmarks/internal/cputime"
)

// The loads: as in the root package's BenchmarkPreciseLateness.
const (
	preciseSpreadTasks = 20_000
	preciseSpread      = 2 * time.Second
	preciseRateTasks   = 1000
	precisePeriod      = 10 * time.Millisecond
	preciseRateFor     = 3 * time.Second
	precisePool        = 2
)

// preciseImpls are the columns: the reference first.
var preciseImpls = []string{"time.AfterFunc", "scheduler", "scheduler, precise"}

// preciseLoad is one load: it runs on impl and returns each run's
// lateness.
type preciseLoad struct {
	name string
	run  func(impl string) ([]time.Duration, error)
}

var preciseLoads = []preciseLoad{
	{fmt.Sprintf("%s one-shot tasks at random delays over %v", count(preciseSpreadTasks), preciseSpread), preciseRunSpread},
	{fmt.Sprintf("%s fixed-rate tasks every %v for %v", count(preciseRateTasks), precisePeriod, preciseRateFor), preciseRunFixedRate},
}

// preciseResult is what one load measured on one impl: every run's
// lateness (sorted), and the process's CPU time per run, each the median
// of the rounds.
type preciseResult struct {
	late   []time.Duration
	cpuNs  float64
	p50s   []time.Duration // per round, for the spread
	p99s   []time.Duration
	cpuNss []float64
}

// runPrecise runs every load on every impl, rounds times, interleaved, and
// writes precise.md and precise-lateness.png into out.
func runPrecise(out string, rounds int) error {
	res := make([][]*preciseResult, len(preciseLoads))
	for li := range preciseLoads {
		res[li] = make([]*preciseResult, len(preciseImpls))
		for ii := range preciseImpls {
			res[li][ii] = &preciseResult{}
		}
	}
	for round := range rounds {
		for li, l := range preciseLoads {
			for ii, impl := range preciseImpls {
				runtime.GC()
				cpu0 := cputime.Process()
				late, err := l.run(impl)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", impl, l.name, err)
				}
				cpu := cputime.Process() - cpu0
				slices.Sort(late)
				r := res[li][ii]
				r.p50s = append(r.p50s, percentile(late, 0.5))
				r.p99s = append(r.p99s, percentile(late, 0.99))
				r.cpuNss = append(r.cpuNss, float64(cpu.Nanoseconds())/float64(len(late)))
				if round == rounds/2 || r.late == nil {
					r.late = late
				}
				fmt.Fprintf(os.Stderr, "round %d %-20s %-40s p50 %6s µs p99 %7s µs\n",
					round+1, impl, l.name, us(percentile(late, 0.5)), us(percentile(late, 0.99)))
			}
		}
	}
	for li := range res {
		for _, r := range res[li] {
			r.cpuNs = medianOf(r.cpuNss)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	md := filepath.Join(out, "precise.md")
	if err := os.WriteFile(md, []byte(preciseMarkdown(res, rounds)), 0o644); err != nil {
		return err
	}
	return plotPrecise(res, filepath.Join(out, "precise-lateness.png"))
}

// medianOf returns the median of v.
func medianOf[T float64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// preciseScheduler returns a scheduler of precisePool workers for impl.
func preciseScheduler(impl string) (*scheduler.Scheduler, error) {
	return scheduler.New(precisePool, scheduler.WithPreciseTiming(impl == "scheduler, precise"))
}

func preciseStop(s *scheduler.Scheduler) {
	s.ShutdownNow()
	_ = s.AwaitTermination(context.Background())
}

// preciseRunSpread runs the one-shot load once.
func preciseRunSpread(impl string) ([]time.Duration, error) {
	r := rand.New(rand.NewPCG(7, 7))
	late := make([]time.Duration, preciseSpreadTasks)
	var wg sync.WaitGroup
	wg.Add(preciseSpreadTasks)
	sched := func(d time.Duration, fn func()) error { time.AfterFunc(d, fn); return nil }
	if impl != "time.AfterFunc" {
		s, err := preciseScheduler(impl)
		if err != nil {
			return nil, err
		}
		defer preciseStop(s)
		sched = func(d time.Duration, fn func()) error {
			_, err := s.Schedule(func(context.Context) error { fn(); return nil }, d)
			return err
		}
	}
	for i := range preciseSpreadTasks {
		d := time.Duration(r.Int64N(int64(preciseSpread)))
		due := time.Now().Add(d)
		if err := sched(d, func() { late[i] = time.Since(due); wg.Done() }); err != nil {
			return nil, err
		}
	}
	wg.Wait()
	return late, nil
}

// preciseRunFixedRate runs the fixed-rate load once.
func preciseRunFixedRate(impl string) ([]time.Duration, error) {
	const runs = int(preciseRateFor / precisePeriod)
	late := make([][]time.Duration, preciseRateTasks)
	for i := range late {
		late[i] = make([]time.Duration, 0, runs+2)
	}
	var left atomic.Int64
	left.Store(preciseRateTasks)
	done := make(chan struct{})
	// record notes a run of task i due at due and reports whether the task
	// has run enough.
	record := func(i int, due time.Time) bool {
		late[i] = append(late[i], time.Since(due))
		if len(late[i]) == runs && left.Add(-1) == 0 {
			close(done)
		}
		return len(late[i]) >= runs
	}
	start := time.Now()
	firstDue := func(i int) time.Time {
		return start.Add(20*time.Millisecond + time.Duration(i)*precisePeriod/preciseRateTasks)
	}
	if impl == "time.AfterFunc" {
		for i := range preciseRateTasks {
			var t *time.Timer
			next := firstDue(i)
			var mu sync.Mutex // t is set after the first run may begin
			mu.Lock()
			t = time.AfterFunc(time.Until(next), func() {
				if !record(i, next) {
					next = next.Add(precisePeriod)
					mu.Lock()
					t.Reset(time.Until(next))
					mu.Unlock()
				}
			})
			mu.Unlock()
		}
	} else {
		s, err := preciseScheduler(impl)
		if err != nil {
			return nil, err
		}
		defer preciseStop(s)
		for i := range preciseRateTasks {
			due0 := firstDue(i)
			k := 0
			var f scheduler.ScheduledFuture
			var mu sync.Mutex // f is set after the first run may begin
			mu.Lock()
			f, err = s.ScheduleAtFixedRate(func(context.Context) error {
				if record(i, due0.Add(time.Duration(k)*precisePeriod)) {
					mu.Lock()
					f.Cancel(false)
					mu.Unlock()
				}
				k++
				return nil
			}, time.Until(due0), precisePeriod)
			mu.Unlock()
			if err != nil {
				return nil, err
			}
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("the fixed-rate tasks did not finish in a minute")
	}
	var all []time.Duration
	for _, l := range late {
		all = append(all, l[:runs]...)
	}
	return all, nil
}

// preciseMarkdown renders precise.md.
func preciseMarkdown(res [][]*preciseResult, rounds int) string {
	var b strings.Builder
	b.WriteString("# Precise timing: start lateness against time.AfterFunc\n\n")
	b.WriteString("Generated by `go run . -precise` in `benchmarks/` on " + machine() + ".\n\n")
	fmt.Fprintf(&b, "Each load ran %d times on each implementation, interleaved; the numbers are the medians of the "+
		"rounds' p50, p99 and CPU time per run (getrusage, user+system, over the round). Lateness is the time from "+
		"a run's due instant to the start of its body; the pool is %d workers.\n\n", rounds, precisePool)
	b.WriteString("| load | | " + strings.Join(preciseImpls, " | ") + " |\n|---|---|" +
		strings.Repeat("---:|", len(preciseImpls)) + "\n")
	for li, l := range preciseLoads {
		row := func(what string, cell func(r *preciseResult) string) {
			b.WriteString("| " + l.name + " | " + what + " |")
			for _, r := range res[li] {
				b.WriteString(" " + cell(r) + " |")
			}
			b.WriteString("\n")
		}
		row("p50 (µs)", func(r *preciseResult) string { return us(medianOf(r.p50s)) })
		row("p99 (µs)", func(r *preciseResult) string { return us(medianOf(r.p99s)) })
		row("CPU per run (ns)", func(r *preciseResult) string { return num(r.cpuNs) })
		row("CPU per run vs scheduler", func(r *preciseResult) string {
			return fmt.Sprintf("%.2f×", r.cpuNs/res[li][1].cpuNs)
		})
	}
	b.WriteString("\n![precise lateness](precise-lateness.png)\n")
	return b.String()
}

// plotPrecise draws, for each load, the lateness distribution of each
// implementation: the share of runs started at most x late, x on a log
// scale; one panel per load.
func plotPrecise(res [][]*preciseResult, path string) error {
	const floor = 10.0 // µs: earlier starts are drawn at the floor
	plots := make([][]*plot.Plot, len(preciseLoads))
	for li, l := range preciseLoads {
		p := plot.New()
		p.Title.Text = l.name
		p.X.Label.Text = "lateness: start of run - due time (log scale)"
		p.Y.Label.Text = "share of runs started at most this late"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{format: func(v float64) string { return fmtDuration(v * float64(time.Microsecond)) }}
		p.Y.Min, p.Y.Max = 0, 1
		p.Add(plotter.NewGrid())
		hi := floor
		for ii, r := range res[li] {
			pts, top := cdfPoints(r.late, floor)
			hi = math.Max(hi, top)
			line, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			line.Color = palette[ii%len(palette)]
			line.Width = vg.Points(2)
			p.Add(line)
			p.Legend.Add(fmt.Sprintf("%s (p50 %s µs, p99 %s µs)", preciseImpls[ii],
				us(percentile(r.late, 0.5)), us(percentile(r.late, 0.99))), line)
		}
		p.X.Min, p.X.Max = floor, hi*1.2
		p.Legend.Top = false
		p.Legend.Left = false
		p.Legend.XOffs = -vg.Points(5)
		p.Legend.YOffs = vg.Points(30)
		plots[li] = []*plot.Plot{p}
	}
	const w, h = 9 * vg.Inch, 5 * vg.Inch
	img := vgimg.New(w, h*vg.Length(len(plots)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(10)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
