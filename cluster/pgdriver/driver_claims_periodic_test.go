package pgdriver_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The claims of periodic occurrences where the conformance suite cannot
// look: the overlap rule under claims racing on many connections, and the
// "ended <kind>" notice of the steps that end an occurrence's run.

// storeOccurrences stores n occurrences of periodic task name, a minute
// apart from past, and returns their IDs and due times, earliest first.
func storeOccurrences(t *testing.T, d *pgdriver.Driver, name string, n int) (ids []string, dues []time.Time) {
	t.Helper()
	for i := range n {
		due := past.Add(time.Duration(i) * time.Minute)
		id := driver.OccurrenceID(name, due)
		got, err := d.Schedule(context.Background(), pgdriver.NewTask{ID: id, Kind: "@" + name, Due: due, FixedID: true})
		if err != nil || got != pgdriver.StoredCreated {
			t.Fatalf("Schedule(%s) = %v, %v; want created", id, got, err)
		}
		ids, dues = append(ids, id), append(dues, due)
	}
	return ids, dues
}

// TestClaimOccurrenceWithoutOverlapRacing: eight occurrences of a task
// without overlap, all due, claimed at once on as many connections, round
// after round (the winner completed after each): each round exactly one
// wins, and the others are blocked until the winner's lease expires.
func TestClaimOccurrenceWithoutOverlapRacing(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	ids, dues := storeOccurrences(t, d, "p", 8)
	left := map[int]bool{}
	for i := range ids {
		left[i] = true
	}
	for len(left) > 0 {
		var mu sync.Mutex // guards claims and errs
		claims := map[int]driver.Claim{}
		var errs []error
		var wg sync.WaitGroup
		for i := range left {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := d.ClaimOccurrence(ctx, ids[i], "@p", dues[i], testLease, "owner", driver.Occurrence{
					Misfire: "coalesce", Due: dues[i], Threshold: time.Second, Retention: time.Hour})
				mu.Lock()
				defer mu.Unlock()
				claims[i] = c
				if err != nil {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		won := -1
		for i, c := range claims {
			if c.Outcome == driver.ClaimWon {
				if won >= 0 {
					t.Fatalf("occurrences %d and %d both won without overlap", won, i)
				}
				won = i
			}
		}
		if won < 0 {
			t.Fatalf("no occurrence of %d won: %+v", len(claims), claims)
		}
		running := mustGet(t, d.Store(), ids[won])
		for i, c := range claims {
			if i != won && (c.Outcome != driver.ClaimBlocked || !c.BlockedUntil.Equal(running.LeaseExpires)) {
				t.Fatalf("occurrence %d beside the running %d = %+v; want blocked until %v", i, won, c, running.LeaseExpires)
			}
		}
		if r, err := d.Complete(ctx, ids[won], "@p", "owner", time.Hour, driver.KeepDone{}, driver.Timeline{}); err != nil || r != pgdriver.RecordedDone {
			t.Fatalf("Complete(%s) = %q, %v", ids[won], r, err)
		}
		delete(left, won)
	}
}

// listenRaw listens on the channels of partitions on a connection of its
// own, closed with t.
func listenRaw(t *testing.T, pool *pgxpool.Pool, partitions ...int) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for _, p := range partitions {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{fmt.Sprintf("stpe_p%d", p)}.Sanitize()); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// nextEnded returns the payload of the next "ended" notice on conn,
// failing t if none comes within eventWait.
func nextEnded(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatal("waiting for an ended notice:", err)
		}
		if strings.HasPrefix(n.Payload, "ended ") {
			return n.Payload
		}
	}
}

// TestPeriodicRunEndsAreTold: each step that ends the run of a periodic
// occurrence (Complete, Fail, Release, Reap, and Cancel of a running one)
// tells "ended <kind>" on the task's partition, in commit order; the end
// of another kind's run, the cancel of a pending occurrence and a skipped
// one tell none.
func TestPeriodicRunEndsAreTold(t *testing.T) {
	ctx := context.Background()
	d, pool := newDriver(t)
	s := d.Store()
	pp, pq := driver.PeriodicPartition("p", s.Partitions()), driver.PeriodicPartition("q", s.Partitions())
	conn := listenRaw(t, pool, pp, pq)
	none := driver.Timeline{}

	// What tells nothing.
	other, _ := idsIn(s, pp, 1)
	mustSchedule(t, s, dueTask(other[0]))
	tok, _ := mustClaim(t, s, other[0])
	if r, err := d.Complete(ctx, other[0], "k", tok, time.Hour, driver.KeepDone{}, none); err != nil || r != pgdriver.RecordedDone {
		t.Fatalf("Complete of kind k = %q, %v", r, err)
	}
	qs, qdues := storeOccurrences(t, d, "q", 2)
	if _, _, err := d.Cancel(ctx, qs[0], "@q", time.Hour, driver.KeepDone{}); err != nil {
		t.Fatal(err)
	}
	c, err := d.ClaimOccurrence(ctx, qs[1], "@q", qdues[1], testLease, "owner", driver.Occurrence{
		Misfire: "skip", Due: qdues[1], Threshold: time.Second, Retention: time.Hour})
	if err != nil || c.Outcome != driver.ClaimSkipped {
		t.Fatalf("ClaimOccurrence of a late one under skip = %+v, %v; want skipped", c, err)
	}

	// What tells "ended @p", each ending the run of an occurrence.
	ps, pdues := storeOccurrences(t, d, "p", 5)
	ends := []struct {
		step string
		end  func(id, owner string) error
	}{
		{"complete", func(id, owner string) error {
			_, err := d.Complete(ctx, id, "@p", owner, time.Hour, driver.KeepDone{}, none)
			return err
		}},
		{"fail", func(id, owner string) error {
			_, err := d.Fail(ctx, driver.Failure{ID: id, Kind: "@p", Owner: owner, Error: "failed", Outcome: driver.OutcomeFailed}, none)
			return err
		}},
		{"release", func(id, owner string) error {
			_, err := d.Release(ctx, id, "@p", owner)
			return err
		}},
		{"reap", func(id, owner string) error {
			expireLease(t, pool, id)
			lost, err := d.Reap(ctx, map[int][]string{pp: {id}}, 5, none)
			if err == nil && len(lost) != 1 {
				t.Errorf("Reap(%s) took back %v", id, lost)
			}
			return err
		}},
		{"cancel", func(id, owner string) error {
			_, running, err := d.Cancel(ctx, id, "@p", time.Hour, driver.KeepDone{})
			if err == nil && !running {
				t.Errorf("Cancel(%s) found it not running", id)
			}
			return err
		}},
	}
	for i, e := range ends {
		c, err := d.Claim(ctx, ps[i], "@p", pdues[i], testLease, "owner-"+e.step)
		if err != nil || c.Outcome != driver.ClaimWon {
			t.Fatalf("Claim(%s) = %+v, %v", ps[i], c, err)
		}
		if err := e.end(ps[i], "owner-"+e.step); err != nil {
			t.Fatalf("%s: %v", e.step, err)
		}
		if got := nextEnded(t, conn); got != "ended @p" {
			t.Fatalf("after %s of a running occurrence, heard %q; want ended @p", e.step, got)
		}
	}
}
