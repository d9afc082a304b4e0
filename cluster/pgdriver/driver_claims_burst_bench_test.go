package pgdriver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
)

// burstTasks is how many tasks fall due at once in the claim-burst
// benchmarks, and burstClaimers how many goroutines claim them, as a
// node's workers do.
const (
	burstTasks    = 512
	burstClaimers = 64
)

// BenchmarkClaimBurst measures a burst of claims of burstTasks tasks due
// at once, from burstClaimers goroutines: Claim of plain tasks (combined,
// claim_combine.go) against ClaimOccurrence of one occurrence each of as
// many periodic tasks (a statement per claim), the case of many periodic
// tasks firing at the same second. The time is per claim, and so is the
// server's CPU time.
func BenchmarkClaimBurst(b *testing.B) {
	for _, periodic := range []bool{false, true} {
		name := "Claim"
		if periodic {
			name = "ClaimOccurrence"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			d := burstDriver(b)
			srv := pgtest.Shared(b)
			round := 0
			var serverCPU time.Duration
			for b.Loop() {
				b.StopTimer()
				round++
				ids, kinds, dues := storeBurst(b, d, round, periodic)
				before := processCPU(srv)
				b.StartTimer()
				claimBurst(b, ctx, d, ids, kinds, dues, periodic)
				b.StopTimer()
				serverCPU += processCPU(srv) - before
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*burstTasks), "ns/claim")
			b.ReportMetric(float64(serverCPU.Nanoseconds())/float64(b.N*burstTasks), "server-cpu-ns/claim")
		})
	}
}

// burstDriver is a driver on a fresh database with a pool of 16
// connections, a node's pool in the benchmarks (benchmarks/riverbench).
func burstDriver(b *testing.B) *pgdriver.Driver {
	pool := pgtest.NewPool(b, pgtest.Database(b)+"&pool_max_conns=16")
	if _, err := pgdriver.Migrate(context.Background(), pool); err != nil {
		b.Fatal(err)
	}
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 8})
	if err != nil {
		b.Fatal(err)
	}
	d, err := pgdriver.NewDriver(s)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// processCPU is the CPU time (user and system) of srv's processes: the
// postmaster's children alive now, from /proc (clock ticks of 10 ms).
func processCPU(srv *pgserver.Server) time.Duration {
	b, err := os.ReadFile(filepath.Join(srv.Dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	postmaster := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	var total time.Duration
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 13 || f[1] != postmaster {
			continue
		}
		user, _ := strconv.ParseInt(f[11], 10, 64)
		system, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(user+system) * 10 * time.Millisecond
	}
	return total
}

// storeBurst stores burstTasks tasks due now (round names them): plain
// tasks of kind "k", or one occurrence each of as many periodic tasks.
func storeBurst(b *testing.B, d *pgdriver.Driver, round int, periodic bool) (ids, kinds []string, dues []time.Time) {
	b.Helper()
	due := time.Now().Add(-time.Second).Truncate(time.Microsecond)
	tasks := make([]pgdriver.NewTask, burstTasks)
	for i := range tasks {
		id, kind := fmt.Sprintf("r%d-%d", round, i), "k"
		if periodic {
			kind = fmt.Sprintf("@p%d", i)
			id = driver.OccurrenceID(kind[1:], due.Add(time.Duration(round)*time.Microsecond))
		}
		tasks[i] = pgdriver.NewTask{ID: id, Kind: kind, Due: due, FixedID: true}
		ids, kinds, dues = append(ids, id), append(kinds, kind), append(dues, due)
	}
	for _, r := range d.ScheduleMany(context.Background(), tasks) {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	return ids, kinds, dues
}

// claimBurst claims every task of ids from burstClaimers goroutines and
// fails unless each is won.
func claimBurst(b *testing.B, ctx context.Context, d *pgdriver.Driver, ids, kinds []string, dues []time.Time, periodic bool) {
	next := make(chan int, len(ids))
	for i := range ids {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for range burstClaimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var (
					c   driver.Claim
					err error
				)
				if periodic {
					c, err = d.ClaimOccurrence(ctx, ids[i], kinds[i], dues[i], time.Hour, "owner", driver.Occurrence{
						Misfire: "coalesce", Overlap: true, Due: dues[i], Retention: time.Hour})
				} else {
					c, err = d.Claim(ctx, ids[i], kinds[i], dues[i], time.Hour, "owner")
				}
				if err == nil && c.Outcome != driver.ClaimWon {
					err = fmt.Errorf("claim %s: outcome %v", ids[i], c.Outcome)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
