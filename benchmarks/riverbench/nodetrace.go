//go:build clusternode

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Where a real node's start lateness goes (-trace): each node's driver is
// wrapped so that every task's steps are stamped on the harness's clock
// (the notice of the task first heard by any node, the won claim sent and
// answered, the handler's start, the completion sent and answered), and
// the run prints each step's share of the lateness, over all tasks and
// over the latest 1 %, with the Go scheduler's latency of the process.

var asyncCommit = flag.Bool("async-commit", false, "node-lateness: a diagnostic, not a setting to run with: the server's synchronous_commit off for every statement (the bound of what a claim's or a completion's commit wait costs)")

var traceNodes = flag.Bool("trace", false, "node-lateness: print where each task's lateness goes (the driver's calls stamped)")

// taskStamps are the times of one task's steps.
type taskStamps struct {
	due, heard, claimSent, claimDone, start, completeSent, completeDone time.Time
	tries                                                               int // claims sent, the won one included
}

// taskTrace collects the stamps of a run's tasks.
type taskTrace struct {
	mu    sync.Mutex // guards tasks
	tasks map[string]*taskStamps
	sched *metrics.Float64Histogram // the Go scheduler's latencies at the start
	cpu   cpuUse                    // the CPU used before the run
	// machine, if set, is the machine's load over the run.
	machine *machineSampler
}

func newTaskTrace() *taskTrace {
	return &taskTrace{tasks: map[string]*taskStamps{}, sched: schedLatencies()}
}

// stamp runs set on id's stamps under the lock.
func (t *taskTrace) stamp(id string, set func(s *taskStamps)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.tasks[id]
	if s == nil {
		s = &taskStamps{}
		t.tasks[id] = s
	}
	set(s)
}

// traceDriver is a node's driver with its claims, completions and
// notices stamped in trace.
type traceDriver struct {
	driver.Driver
	trace *taskTrace
}

func (d traceDriver) Claim(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string) (driver.Claim, error) {
	sent := time.Now()
	c, err := d.Driver.Claim(ctx, id, kind, due, lease, owner)
	done := time.Now()
	d.trace.stamp(id, func(s *taskStamps) {
		s.tries++
		if err == nil && c.Outcome == driver.ClaimWon {
			s.claimSent, s.claimDone = sent, done
		}
	})
	return c, err
}

func (d traceDriver) Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep driver.KeepDone, tl driver.Timeline) (driver.Recorded, error) {
	sent := time.Now()
	r, err := d.Driver.Complete(ctx, id, kind, owner, retention, keep, tl)
	done := time.Now()
	d.trace.stamp(id, func(s *taskStamps) { s.completeSent, s.completeDone = sent, done })
	return r, err
}

func (d traceDriver) Subscribe(ctx context.Context, on func(driver.Notice)) (driver.Subscription, error) {
	return d.Driver.Subscribe(ctx, func(n driver.Notice) {
		if n.Kind == driver.NoticePending {
			heard := time.Now()
			for _, task := range n.Tasks {
				d.trace.stamp(task.ID, func(s *taskStamps) {
					if s.heard.IsZero() {
						s.heard = heard
					}
				})
			}
		}
		on(n)
	})
}

// started stamps the handler's start of task id, due at due.
func (t *taskTrace) started(id string, due time.Time) {
	now := time.Now()
	t.stamp(id, func(s *taskStamps) { s.due, s.start = due, now })
}

// String is the breakdown: for each step, its p50 / p99 / max over the
// tasks, and its mean over the latest 1 % of them.
func (t *taskTrace) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	type step struct {
		name string
		of   func(s *taskStamps) time.Duration
	}
	steps := []step{
		{"lateness (due to handler)", func(s *taskStamps) time.Duration { return s.start.Sub(s.due) }},
		{"due to notice heard", func(s *taskStamps) time.Duration { return s.heard.Sub(s.due) }},
		{"due to won claim sent", func(s *taskStamps) time.Duration { return s.claimSent.Sub(s.due) }},
		{"won claim's round trip", func(s *taskStamps) time.Duration { return s.claimDone.Sub(s.claimSent) }},
		{"claim answered to handler", func(s *taskStamps) time.Duration { return s.start.Sub(s.claimDone) }},
		{"completion's round trip", func(s *taskStamps) time.Duration { return s.completeDone.Sub(s.completeSent) }},
	}
	var all []*taskStamps
	tries := 0
	for _, s := range t.tasks {
		if !s.start.IsZero() && !s.claimSent.IsZero() {
			all = append(all, s)
			tries += s.tries
		}
	}
	if len(all) == 0 {
		return "no task traced"
	}
	slices.SortFunc(all, func(a, b *taskStamps) int { return int(a.start.Sub(a.due) - b.start.Sub(b.due)) })
	tail := all[len(all)*99/100:]
	var b strings.Builder
	fmt.Fprintf(&b, "  where the lateness goes (%d tasks, %.3f claims each; p50 / p99 / max over all, mean over the latest %d):", len(all), float64(tries)/float64(len(all)), len(tail))
	for _, st := range steps {
		d := make([]time.Duration, len(all))
		for i, s := range all {
			d[i] = st.of(s)
		}
		var tailSum time.Duration
		for _, s := range tail {
			tailSum += st.of(s)
		}
		slices.Sort(d)
		q := func(f float64) time.Duration {
			return d[min(len(d)-1, int(f*float64(len(d))))].Round(10 * time.Microsecond)
		}
		fmt.Fprintf(&b, "\n    %-27s %9v / %9v / %9v   tail mean %9v", st.name, q(0.5), q(0.99), d[len(d)-1].Round(10*time.Microsecond), (tailSum / time.Duration(len(tail))).Round(10*time.Microsecond))
	}
	first := all[0].due
	for _, s := range all {
		if s.due.Before(first) {
			first = s.due
		}
	}
	buckets := map[int]int{}
	for _, s := range tail {
		buckets[int(s.due.Sub(first)/(100*time.Millisecond))]++
	}
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(&b, "\n    the latest 1 %% by due time (100 ms buckets from the first due: tasks):")
	for _, k := range keys {
		fmt.Fprintf(&b, " %.1fs:%d", float64(k)/10, buckets[k])
	}
	if t.machine != nil {
		fmt.Fprintf(&b, "\n%s", t.machine.around(first, keys))
	}
	fmt.Fprintf(&b, "\n    Go scheduler latency of the process over the run: %s", schedLatencySince(t.sched))
	return b.String()
}

// schedLatencies is the Go runtime's histogram of how long goroutines
// waited to run, since the process started.
func schedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// schedLatencySince is the p50 / p99 / p99.9 of the scheduler latencies
// since before.
func schedLatencySince(before *metrics.Float64Histogram) string {
	now := schedLatencies()
	counts := slices.Clone(now.Counts)
	var total uint64
	for i := range counts {
		counts[i] -= before.Counts[i]
		total += counts[i]
	}
	at := func(q float64) time.Duration {
		var seen uint64
		for i, c := range counts {
			seen += c
			if float64(seen) >= q*float64(total) {
				return time.Duration(now.Buckets[i+1] * float64(time.Second)).Round(time.Microsecond)
			}
		}
		return 0
	}
	return fmt.Sprintf("p50 %v, p99 %v, p99.9 %v (upper bounds of the buckets)", at(0.5), at(0.99), at(0.999))
}

// slowStatements has the server log every statement that takes
// longer than threshold (log_min_duration_statement) from now on, and
// returns a function that turns it off and tallies the statements logged
// since, by their first words.
func slowStatements(ctx context.Context, srv *pgserver.Server, threshold time.Duration) (func() string, error) {
	conn, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		return nil, err
	}
	set := func(v string) error {
		if _, err := conn.Exec(ctx, "ALTER SYSTEM SET log_min_duration_statement = '"+v+"'"); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "SELECT pg_reload_conf()")
		return err
	}
	logPath := filepath.Join(srv.Dir, "postgres.log")
	st, err := os.Stat(logPath)
	if err == nil {
		err = set(strconv.FormatInt(threshold.Milliseconds(), 10) + "ms")
	}
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	from := st.Size()
	return func() string {
		defer conn.Close(ctx)
		_ = set("-1")
		b, err := os.ReadFile(logPath)
		if err != nil || int64(len(b)) < from {
			return "server log unreadable"
		}
		type tally struct {
			n     int
			total float64
			worst float64
		}
		byWhat := map[string]*tally{}
		lines := strings.Split(string(b[from:]), "\n")
		for k, line := range lines {
			i := strings.Index(line, "duration: ")
			if i < 0 {
				continue
			}
			var ms float64
			if _, err := fmt.Sscanf(line[i:], "duration: %f ms", &ms); err != nil {
				continue
			}
			what := line[i:]
			if j := strings.Index(what, ": "); j >= 0 {
				what = what[j+2:]
			}
			if j := strings.Index(what, " ms  "); j >= 0 {
				what = what[j+5:]
			}
			if strings.HasSuffix(strings.TrimSpace(what), ":") && k+1 < len(lines) {
				what += " " + lines[k+1] + " " + lines[min(k+2, len(lines)-1)]
			}
			what = strings.Join(strings.Fields(what), " ")
			if j := strings.Index(what, ": "); j >= 0 && strings.HasPrefix(what, "execute") || strings.HasPrefix(what, "bind") {
				what = what[:min(len(what), strings.IndexByte(what, ' '))] + what[j:]
			}
			if len(what) > 90 {
				what = what[:90]
			}
			t := byWhat[what]
			if t == nil {
				t = &tally{}
				byWhat[what] = t
			}
			t.n++
			t.total += ms
			t.worst = max(t.worst, ms)
		}
		keys := make([]string, 0, len(byWhat))
		for k := range byWhat {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return byWhat[b].n - byWhat[a].n })
		var out strings.Builder
		fmt.Fprintf(&out, "  statements over %v on the server:", threshold)
		for i, k := range keys {
			if i == 10 {
				break
			}
			t := byWhat[k]
			fmt.Fprintf(&out, "\n    %5d, mean %.1f ms, max %.1f ms: %s", t.n, t.total/float64(t.n), t.worst, k)
		}
		return out.String()
	}, nil
}

// cpuUse is the CPU time, user and system, of this process and of the
// server's processes (the postmaster's children alive at the time).
type cpuUse struct{ self, server time.Duration }

// readCPU reads the CPU time of this process and of srv's processes from
// /proc (clock ticks of 10 ms).
func readCPU(srv *pgserver.Server) cpuUse {
	ticks := func(pid string) (ppid string, t time.Duration) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return "", 0
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 13 {
			return "", 0
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		return f[1], time.Duration(u+k) * 10 * time.Millisecond
	}
	var c cpuUse
	_, c.self = ticks("self")
	b, err := os.ReadFile(filepath.Join(srv.Dir, "data", "postmaster.pid"))
	if err != nil {
		return c
	}
	postmaster := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	_, c.server = ticks(postmaster)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if ppid, t := ticks(e.Name()); ppid == postmaster {
			c.server += t
		}
	}
	return c
}

// statementsLoaded is whether the server was restarted with
// pg_stat_statements.
var statementsLoaded bool

// statementStats has the server count every statement's calls, time and
// WAL from now on in database db (pg_stat_statements, loaded by a
// restart of the server the first time), and returns a function that
// tallies them.
func statementStats(ctx context.Context, srv *pgserver.Server, db string) (func() string, error) {
	if !statementsLoaded {
		conn, err := pgx.Connect(ctx, srv.URL("postgres"))
		if err != nil {
			return nil, err
		}
		_, err = conn.Exec(ctx, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
		conn.Close(ctx)
		if err != nil {
			return nil, err
		}
		srv.Kill()
		if err := srv.Restart(); err != nil {
			return nil, err
		}
		statementsLoaded = true
	}
	conn, err := pgx.Connect(ctx, srv.URL(db))
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()"); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return func() string {
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `
SELECT calls, rows, total_exec_time, wal_records, wal_bytes, left(regexp_replace(query, '\s+', ' ', 'g'), 80)
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY total_exec_time DESC LIMIT 12`)
		if err != nil {
			return err.Error()
		}
		defer rows.Close()
		var b strings.Builder
		b.WriteString("  statements by total time (pg_stat_statements): calls, rows, total ms, mean ms, WAL records and bytes per call")
		for rows.Next() {
			var (
				calls, n, walRecords int64
				total                float64
				walBytes             pgtype.Numeric
				query                string
			)
			if err := rows.Scan(&calls, &n, &total, &walRecords, &walBytes, &query); err != nil {
				return err.Error()
			}
			wb, _ := walBytes.Float64Value()
			fmt.Fprintf(&b, "\n    %6d %7d %8.0f %6.3f %5.1f %7.0f  %s", calls, n, total, total/float64(calls), float64(walRecords)/float64(calls), wb.Float64/float64(calls), query)
		}
		return b.String()
	}, nil
}

// machineSampler records, every 10 ms, the machine's runnable threads
// (/proc/stat procs_running) and its CPU pressure (/proc/pressure/cpu,
// the time some thread waited for a CPU), and every 100 ms the server's
// background work (autovacuum, checkpointer) busy then, so that the
// slowest tasks can be set against what the machine did at their time.
type machineSampler struct {
	mu      sync.Mutex // guards samples
	samples []machineSample
	stopped chan struct{}
}

type machineSample struct {
	at       time.Time
	running  int
	stallUs  int64  // cumulative CPU pressure, µs
	bgActive string // the server's busy background processes (every 100 ms)
}

func sampleMachine(ctx context.Context, pool *pgxpool.Pool) *machineSampler {
	m := &machineSampler{stopped: make(chan struct{})}
	go func() {
		defer close(m.stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			s := machineSample{at: time.Now(), running: procsRunning(), stallUs: cpuStall()}
			if i%10 == 0 {
				var bg string
				_ = pool.QueryRow(ctx, `SELECT coalesce(string_agg(backend_type || ' ' || coalesce(left(query, 30), ''), '; '), '')
FROM pg_stat_activity WHERE backend_type IN ('autovacuum worker', 'checkpointer', 'walwriter', 'background writer') AND (state = 'active' OR wait_event IS NULL)`).Scan(&bg)
				s.bgActive = bg
			}
			m.mu.Lock()
			m.samples = append(m.samples, s)
			m.mu.Unlock()
		}
	}()
	return m
}

// procsRunning is /proc/stat's procs_running.
func procsRunning() int {
	b, _ := os.ReadFile("/proc/stat")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "procs_running "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// cpuStall is /proc/pressure/cpu's "some" total, µs.
func cpuStall() int64 {
	b, _ := os.ReadFile("/proc/pressure/cpu")
	line, _, _ := strings.Cut(string(b), "\n")
	_, total, _ := strings.Cut(line, "total=")
	n, _ := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	return n
}

// around describes the machine in each 100 ms from start of the times
// at (in 100 ms buckets from start) against the whole run's mean.
func (m *machineSampler) around(start time.Time, at []int) string {
	<-m.stopped
	type agg struct {
		n, running int
		stall      int64
		first      int64
		bg         map[string]bool
	}
	by := map[int]*agg{}
	var all agg
	var prev int64
	for i, s := range m.samples {
		k := int(s.at.Sub(start) / (100 * time.Millisecond))
		a := by[k]
		if a == nil {
			a = &agg{bg: map[string]bool{}}
			by[k] = a
		}
		a.n++
		a.running += s.running
		all.n++
		all.running += s.running
		if i > 0 {
			a.stall += s.stallUs - prev
			all.stall += s.stallUs - prev
		}
		prev = s.stallUs
		if s.bgActive != "" {
			a.bg[s.bgActive] = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "    the machine over the run: %.1f runnable threads, CPU pressure %.0f %%", float64(all.running)/float64(max(1, all.n)), float64(all.stall)/float64(max(1, all.n))/100)
	for _, k := range at {
		a := by[k]
		if a == nil {
			continue
		}
		bg := make([]string, 0, len(a.bg))
		for s := range a.bg {
			bg = append(bg, s)
		}
		fmt.Fprintf(&b, "\n      at %.1fs: %.1f runnable threads, CPU pressure %.0f %%, server background: %s", float64(k)/10, float64(a.running)/float64(a.n), float64(a.stall)/float64(a.n)/100, strings.Join(bg, " | "))
	}
	return b.String()
}

// serverSetting sets the server's setting name to value (ALTER SYSTEM,
// then a reload) for the connections made from now on.
func serverSetting(ctx context.Context, srv *pgserver.Server, name, value string) error {
	conn, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER SYSTEM SET "+name+" = '"+value+"'"); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}
