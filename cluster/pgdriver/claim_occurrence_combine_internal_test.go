package pgdriver

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// occurrenceCase is a periodic task's occurrences stored (and perhaps
// one claimed) and the claim asked of its occurrence "asked".
type occurrenceCase struct {
	name string
	// store stores the task's occurrences, of kind, for the claim asked
	// of the occurrence due at due, and returns what the claim asks.
	store func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk
}

// storeOccurrence stores the occurrence of periodic task kind due at due
// and returns its ID.
func storeOccurrence(t *testing.T, s *Store, kind string, due time.Time) string {
	t.Helper()
	id := driver.OccurrenceID(kind[1:], due)
	if _, err := s.Schedule(context.Background(), Task{ID: id, Kind: kind, Payload: []byte("p"), Due: due, Fixed: true}); err != nil {
		t.Fatal(err)
	}
	return id
}

// occurrenceCases cover every answer of an occurrence's claim: won,
// skipped, blocked by an earlier occurrence or by another's run, later,
// early, gone (claimed, never stored, of a paused kind, asked under
// another kind than stored).
func occurrenceCases(dbNow time.Time) []occurrenceCase {
	past := dbNow.Add(-time.Hour).Truncate(time.Second)
	ask := func(id, kind string, due time.Time, o driver.Occurrence) occurrenceAsk {
		o.Due = due
		if o.Misfire == "" {
			o.Misfire = "coalesce"
		}
		return occurrenceAsk{id: id, kind: kind, token: "tok-" + id, lease: time.Hour, due: due, o: o}
	}
	simple := func(o driver.Occurrence) func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
		return func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			return ask(storeOccurrence(t, s, kind, due), kind, due, o)
		}
	}
	return []occurrenceCase{
		{"won", simple(driver.Occurrence{Overlap: true})},
		{"skipped", simple(driver.Occurrence{Next: past.Add(time.Minute), Retention: time.Hour})},
		{"each-blocked", func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			storeOccurrence(t, s, kind, due.Add(-time.Minute))
			return ask(storeOccurrence(t, s, kind, due), kind, due, driver.Occurrence{Misfire: "each", Overlap: true})
		}},
		{"overlap-blocked", func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			running := storeOccurrence(t, s, kind, due.Add(-time.Minute))
			if _, err := s.Claim(context.Background(), running, "someone", time.Hour); err != nil {
				t.Fatal(err)
			}
			return ask(storeOccurrence(t, s, kind, due), kind, due, driver.Occurrence{})
		}},
		{"later", func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			a := simple(driver.Occurrence{Overlap: true})(t, s, kind, due)
			a.due = due.Add(-time.Minute)
			return a
		}},
		{"early", func(t *testing.T, s *Store, kind string, _ time.Time) occurrenceAsk {
			due := dbNow.Add(time.Hour).Truncate(time.Second)
			return ask(storeOccurrence(t, s, kind, due), kind, due, driver.Occurrence{Overlap: true})
		}},
		{"claimed", func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			a := simple(driver.Occurrence{Overlap: true})(t, s, kind, due)
			if _, err := s.Claim(context.Background(), a.id, "someone", time.Hour); err != nil {
				t.Fatal(err)
			}
			return a
		}},
		{"missing", func(_ *testing.T, _ *Store, kind string, due time.Time) occurrenceAsk {
			return ask(driver.OccurrenceID(kind[1:], due), kind, due, driver.Occurrence{Overlap: true})
		}},
		{"paused", func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			if _, err := s.pool.Exec(context.Background(), `INSERT INTO stpe_paused_kinds (kind) VALUES ($1)`, kind); err != nil {
				t.Fatal(err)
			}
			return simple(driver.Occurrence{Overlap: true})(t, s, kind, due)
		}},
		{"other-kind", func(t *testing.T, s *Store, kind string, due time.Time) occurrenceAsk {
			a := simple(driver.Occurrence{Overlap: true})(t, s, kind, due)
			a.kind += "-believed"
			return a
		}},
	}
}

// TestCombinedOccurrenceClaimsAnswerAsLoneClaims: the claims of many
// periodic tasks' occurrences in one statement answer each as its lone
// claim answers it (won, skipped, blocked, later, early, gone), and
// leave each row as the lone claim leaves its twin: running for its own
// token when won, deleted with a done marker when skipped.
func TestCombinedOccurrenceClaimsAnswerAsLoneClaims(t *testing.T) {
	ctx := context.Background()
	s := combineStore(t)
	var dbNow time.Time
	if err := s.pool.QueryRow(ctx, "SELECT statement_timestamp()").Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	due := dbNow.Add(-time.Hour).Truncate(time.Second)
	cases := occurrenceCases(dbNow)
	var calls []*batchCall[occurrenceAsk, claimGot]
	lone := make(map[string]driver.Claim)
	for _, c := range cases {
		l := c.store(t, s, "@lone-"+c.name, due)
		found, ok, err := s.claimTask(ctx, claimOccurrence, true, s.claimOccurrenceArgs(l)...)
		if err != nil {
			t.Fatalf("%s: lone: %v", c.name, err)
		}
		lone[c.name] = occurrenceAnswer(found, ok, l.due)
		calls = append(calls, &batchCall[occurrenceAsk, claimGot]{ctx: ctx, q: c.store(t, s, "@batch-"+c.name, due)})
	}
	s.claimOccurrencesCombined(ctx, calls)
	for i, c := range cases {
		call := calls[i]
		if call.err != nil {
			t.Fatalf("%s: %v", c.name, call.err)
		}
		got, want := occurrenceAnswer(call.a.c, call.a.found, call.q.due), lone[c.name]
		got.StoreNow, want.StoreNow = time.Time{}, time.Time{}
		if got.BlockedUntil.IsZero() != want.BlockedUntil.IsZero() {
			t.Errorf("%s: combined claim blocked until %v, lone until %v", c.name, got.BlockedUntil, want.BlockedUntil)
		}
		got.BlockedUntil, want.BlockedUntil = time.Time{}, time.Time{} // each its own run's lease
		if got.Kind != "" {
			got.Kind = "@lone-" + got.Kind[len("@batch-"):]
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: combined claim answered %+v, lone %+v", c.name, got, want)
		}
		var state, tok string
		err := s.pool.QueryRow(ctx, `SELECT state, coalesce(lease_token, '') FROM stpe_tasks WHERE id = $1`, call.q.id).Scan(&state, &tok)
		gone := err != nil
		if won := got.Outcome == driver.ClaimWon; won != (tok == call.q.token) {
			t.Errorf("%s: answered %v, row %s held by %q", c.name, got.Outcome, state, tok)
		}
		if skipped := got.Outcome == driver.ClaimSkipped; skipped != (gone && c.name != "missing") {
			t.Errorf("%s: answered %v, row gone: %v (%v)", c.name, got.Outcome, gone, err)
		}
		var marks int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM stpe_done_marks WHERE id = $1`, call.q.id).Scan(&marks); err != nil {
			t.Fatal(err)
		}
		if (marks == 1) != (got.Outcome == driver.ClaimSkipped) {
			t.Errorf("%s: answered %v, %d done markers", c.name, got.Outcome, marks)
		}
	}
	want := map[string]driver.ClaimOutcome{"won": driver.ClaimWon, "skipped": driver.ClaimSkipped,
		"each-blocked": driver.ClaimBlocked, "overlap-blocked": driver.ClaimBlocked, "later": driver.ClaimLater,
		"early": driver.ClaimEarly, "claimed": driver.ClaimGone, "missing": driver.ClaimGone, "paused": driver.ClaimGone,
		"other-kind": driver.ClaimWon}
	for name, outcome := range want {
		if lone[name].Outcome != outcome {
			t.Errorf("%s: the lone claim answered %v, want %v: the case does not cover its answer", name, lone[name].Outcome, outcome)
		}
	}
}

// TestCombinedOccurrenceClaimsRacing: occurrences of 24 periodic tasks
// without overlap, two due occurrences each, claimed all at once from 48
// goroutines on one store (so the claims combine) and from a second store
// on the same database: exactly one occurrence of each task wins, and the
// other is blocked or gone, never won as well.
func TestCombinedOccurrenceClaimsRacing(t *testing.T) {
	ctx := context.Background()
	s := combineStore(t)
	other, err := New(s.pool, Options{Partitions: 8, Node: "n2"})
	if err != nil {
		t.Fatal(err)
	}
	var dbNow time.Time
	if err := s.pool.QueryRow(ctx, "SELECT statement_timestamp()").Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	due := dbNow.Add(-time.Hour).Truncate(time.Second)
	const tasks = 24
	var asks []occurrenceAsk
	for i := range tasks {
		kind := fmt.Sprintf("@race-%d", i)
		for j := range 2 {
			d := due.Add(time.Duration(j) * time.Minute)
			id := storeOccurrence(t, s, kind, d)
			asks = append(asks, occurrenceAsk{id: id, kind: kind, token: "tok-" + id, lease: time.Hour, due: d,
				o: driver.Occurrence{Misfire: "coalesce", Due: d, Next: dbNow.Add(time.Hour)}})
		}
	}
	var mu sync.Mutex // guards won and errs
	won := map[string]int{}
	var errs []error
	var wg sync.WaitGroup
	for i, a := range asks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := s
			if i%3 == 0 {
				st = other
			}
			got, err := st.occurrences.do(ctx, a)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			switch c := occurrenceAnswer(got.c, got.found, a.due); c.Outcome {
			case driver.ClaimWon:
				won[a.kind]++
			case driver.ClaimBlocked, driver.ClaimGone:
			default:
				errs = append(errs, fmt.Errorf("%s: answered %v", a.id, c.Outcome))
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i := range tasks {
		if kind := fmt.Sprintf("@race-%d", i); won[kind] != 1 {
			t.Errorf("%s: %d occurrences won, want exactly 1 (no overlap)", kind, won[kind])
		}
	}
}
