package scheduler_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// BenchmarkGrowThenCancel measures what the steady-state benchmarks do not,
// the way the compare harness (../shared/bench, workload "schedcancel")
// does: in a fresh process, whose heap grows from empty, n one-shot tasks
// are scheduled at uniformly random delays in [1 h, 2 h), then all are
// canceled in submission order (the scheduler with remove-on-cancel,
// time.AfterFunc with Stop). Each op re-executes the test binary
// (growChild, from TestMain) for one round and reports, per task,
// schedule-ns/task, cancel-ns/task, total-ns/task and B/task (the live heap
// after scheduling less the live heap before, per task).
//
// impl=scheduler is the default (with the timing wheel), impl=scheduler-heap
// the heap alone (WithTimingWheel(false)). pending=10M runs only with
// SCHEDULER_BENCH_10M=1 set: each round needs about 2 GB. Run it with
// -benchtime 1x and -count.
func BenchmarkGrowThenCancel(b *testing.B) {
	sizes := []int{1_000_000}
	if os.Getenv("SCHEDULER_BENCH_10M") == "1" {
		sizes = append(sizes, 10_000_000)
	}
	for _, n := range sizes {
		for _, impl := range []string{"afterfunc", "scheduler", "scheduler-heap"} {
			b.Run(fmt.Sprintf("pending=%dM/impl=%s", n/1_000_000, impl), func(b *testing.B) {
				var sum growResult
				for range b.N {
					r := benchGrowChild(b, impl, n)
					sum.sched += r.sched
					sum.cancel += r.cancel
					sum.bytes += r.bytes
				}
				k := float64(b.N)
				b.ReportMetric(sum.sched/k, "schedule-ns/task")
				b.ReportMetric(sum.cancel/k, "cancel-ns/task")
				b.ReportMetric((sum.sched+sum.cancel)/k, "total-ns/task")
				b.ReportMetric(sum.bytes/k, "B/task")
				b.ReportMetric(0, "ns/op") // the op is a whole process; the metrics above are the result
			})
		}
	}
}

// growResult is one round's figures, per task.
type growResult struct {
	sched, cancel, bytes float64
}

// growChildEnv tells the test binary to run one round of
// BenchmarkGrowThenCancel instead of its tests: "impl:n".
const growChildEnv = "SCHEDULER_GROW_CHILD"

// benchGrowChild runs one round in a fresh process and parses its result
// line.
func benchGrowChild(b *testing.B, impl string, n int) growResult {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", growChildEnv, impl, n))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("grow-then-cancel child (%s, %d): %v\n%s", impl, n, err, out.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] == "growcancel" {
			var r growResult
			var errs [3]error
			r.sched, errs[0] = strconv.ParseFloat(f[1], 64)
			r.cancel, errs[1] = strconv.ParseFloat(f[2], 64)
			r.bytes, errs[2] = strconv.ParseFloat(f[3], 64)
			for _, err := range errs {
				require.NoError(b, err, "result line %q", sc.Text())
			}
			return r
		}
	}
	b.Fatalf("grow-then-cancel child (%s, %d) printed no result:\n%s", impl, n, out.String())
	return growResult{}
}

// growChild is one round of BenchmarkGrowThenCancel, run by TestMain in a
// process of its own when growChildEnv is set ("impl:n"). It prints
// "growcancel <schedule ns> <cancel ns> <bytes>", per task, and returns the
// process's exit code.
func growChild(spec string) int {
	r, err := growRound(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grow-then-cancel child:", err)
		return 1
	}
	fmt.Printf("growcancel %.1f %.1f %.1f\n", r.sched, r.cancel, r.bytes)
	return 0
}

// growRound schedules and cancels as the harness does and returns the
// figures per task.
func growRound(spec string) (growResult, error) {
	impl, count, ok := strings.Cut(spec, ":")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n <= 0 {
		return growResult{}, fmt.Errorf("%s=%q: want impl:n", growChildEnv, spec)
	}

	// As the harness: the delays and the handles exist before the
	// baseline, and the timed loops do nothing else.
	rng := rand.New(rand.NewPCG(1, 0))
	delays := make([]time.Duration, n)
	for i := range delays {
		delays[i] = time.Hour + time.Duration(rng.Int64N(int64(time.Hour)))
	}
	var r growResult
	switch impl {
	case "afterfunc":
		timers := make([]*time.Timer, n)
		h0 := benchLiveHeap()
		t0 := time.Now()
		for i, d := range delays {
			timers[i] = time.AfterFunc(d, benchNopFunc)
		}
		sched := time.Since(t0)
		h1 := benchLiveHeap()
		t1 := time.Now()
		for _, tm := range timers {
			tm.Stop()
		}
		r = growResult{sched: float64(sched), cancel: float64(time.Since(t1)), bytes: float64(h1 - h0)}
		runtime.KeepAlive(timers)
	case "scheduler", "scheduler-heap":
		s, err := scheduler.New(runtime.GOMAXPROCS(0), scheduler.WithRemoveOnCancel(true),
			scheduler.WithTimingWheel(impl == "scheduler"))
		if err != nil {
			return growResult{}, err
		}
		defer s.ShutdownNow()
		fs := make([]scheduler.ScheduledFuture, n)
		h0 := benchLiveHeap()
		t0 := time.Now()
		for i, d := range delays {
			if fs[i], err = s.Schedule(benchNop, d); err != nil {
				return growResult{}, err
			}
		}
		sched := time.Since(t0)
		h1 := benchLiveHeap()
		if q := s.Stats().Queued; q != n {
			return growResult{}, fmt.Errorf("%d queued after scheduling %d", q, n)
		}
		t1 := time.Now()
		for _, f := range fs {
			f.Cancel(false)
		}
		r = growResult{sched: float64(sched), cancel: float64(time.Since(t1)), bytes: float64(h1 - h0)}
		if q := s.Stats().Queued; q != 0 {
			return growResult{}, fmt.Errorf("%d queued after canceling all", q)
		}
		s.ShutdownNow()
		if err := s.AwaitTermination(context.Background()); err != nil {
			return growResult{}, err
		}
	default:
		return growResult{}, fmt.Errorf("unknown impl %q", impl)
	}
	k := float64(n)
	return growResult{sched: r.sched / k, cancel: r.cancel / k, bytes: r.bytes / k}, nil
}
