//go:build clusternode

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// What the server and the machine did during a traced node-lateness run
// (-trace, nodetrace.go): the CPU time of the harness and of the server,
// the server's statements (pg_stat_statements), and the machine's
// runnable threads and CPU pressure at the slowest tasks' time.

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
		stall      int64         // µs some thread waited for a CPU
		elapsed    time.Duration // the time the stalls were counted over
		bg         map[string]bool
	}
	by := map[int]*agg{}
	var all agg
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
			stall, elapsed := s.stallUs-m.samples[i-1].stallUs, s.at.Sub(m.samples[i-1].at)
			a.stall, a.elapsed = a.stall+stall, a.elapsed+elapsed
			all.stall, all.elapsed = all.stall+stall, all.elapsed+elapsed
		}
		if s.bgActive != "" {
			a.bg[s.bgActive] = true
		}
	}
	pressure := func(a *agg) float64 {
		return 100 * float64(a.stall) / float64(max(1, a.elapsed.Microseconds()))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "    the machine over the run: %.1f runnable threads, CPU pressure %.0f %%", float64(all.running)/float64(max(1, all.n)), pressure(&all))
	for _, k := range at {
		a := by[k]
		if a == nil {
			continue
		}
		bg := make([]string, 0, len(a.bg))
		for s := range a.bg {
			bg = append(bg, s)
		}
		fmt.Fprintf(&b, "\n      at %.1fs: %.1f runnable threads, CPU pressure %.0f %%, server background: %s", float64(k)/10, float64(a.running)/float64(a.n), pressure(a), strings.Join(bg, " | "))
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
