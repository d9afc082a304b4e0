package pgdriver

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
)

// combineStore is a store with node name "n1" on a fresh database.
func combineStore(t *testing.T) *Store {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	s, err := New(pool, Options{Partitions: 8, Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// claimCase is a task stored (or not) and a claim asked of it.
type claimCase struct {
	name  string
	store func(s *Store, id string) error
	asked time.Duration // the claim's time, from the task's due time
}

// claimCases cover every answer: won, later, early, gone (claimed, never
// stored, of a paused kind).
func claimCases(dbNow time.Time) []claimCase {
	past := dbNow.Add(-time.Hour)
	schedule := func(kind string, due time.Time) func(s *Store, id string) error {
		return func(s *Store, id string) error {
			_, err := s.Schedule(context.Background(), Task{ID: id, Kind: kind, Payload: []byte("p-" + id), Due: due, MaxRetries: 2, Metadata: "m"})
			return err
		}
	}
	return []claimCase{
		{"won", schedule("k", past), 0},
		{"later", schedule("k", past), -time.Minute},
		{"early", schedule("k", dbNow.Add(time.Hour)), 0},
		{"claimed", func(s *Store, id string) error {
			if err := schedule("k", past)(s, id); err != nil {
				return err
			}
			_, err := s.Claim(context.Background(), id, "someone", time.Hour)
			return err
		}, 0},
		{"missing", func(*Store, string) error { return nil }, 0},
		{"paused", schedule("stopped", past), 0},
	}
}

// TestCombinedClaimsAnswerAsLoneClaims: a claim of many IDs in one
// statement answers each as its lone claim answers it (won, later, early,
// gone), and moves to running exactly the tasks it answers won, each for
// its own owner token.
func TestCombinedClaimsAnswerAsLoneClaims(t *testing.T) {
	ctx := context.Background()
	s := combineStore(t)
	if _, err := s.pool.Exec(ctx, `INSERT INTO stpe_paused_kinds (kind) VALUES ('stopped')`); err != nil {
		t.Fatal(err)
	}
	var dbNow time.Time
	if err := s.pool.QueryRow(ctx, "SELECT statement_timestamp()").Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	cases := claimCases(dbNow)
	var calls []*batchCall[claimAsk, claimGot]
	lone := make(map[string]driver.Claim)
	for _, c := range cases {
		for _, prefix := range []string{"batch-", "lone-"} {
			if err := c.store(s, prefix+c.name); err != nil {
				t.Fatal(err)
			}
		}
		asked := toTime(dbNow.Add(-time.Hour).Add(c.asked))
		if c.name == "early" {
			asked = toTime(dbNow.Add(time.Hour))
		}
		found, ok, err := s.claimTask(ctx, claimOne, false, "lone-"+c.name, "tok-lone-"+c.name, micros(time.Hour), s.node, &asked)
		if err != nil {
			t.Fatal(err)
		}
		lone[c.name] = claimAnswer(found, ok, asked)
		calls = append(calls, &batchCall[claimAsk, claimGot]{ctx: ctx,
			q: claimAsk{id: "batch-" + c.name, token: "tok-batch-" + c.name, lease: time.Hour, due: &asked}})
	}
	s.claimCombined(ctx, calls)
	for i, c := range cases {
		call := calls[i]
		if call.err != nil {
			t.Fatalf("%s: %v", c.name, call.err)
		}
		got, want := claimAnswer(call.a.c, call.a.found, *call.q.due), lone[c.name]
		got.StoreNow, want.StoreNow = time.Time{}, time.Time{}
		got.Payload, want.Payload = []byte(string(got.Payload)), []byte(string(want.Payload))
		if string(got.Payload) == "p-batch-won" {
			got.Payload = []byte("p-lone-won")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: combined claim answered %+v, lone %+v", c.name, got, want)
		}
		var state, tok string
		if err := s.pool.QueryRow(ctx, `SELECT state, coalesce(lease_token, '') FROM stpe_tasks WHERE id = $1`, call.q.id).Scan(&state, &tok); err != nil && c.name != "missing" {
			t.Fatal(err)
		}
		if won := got.Outcome == driver.ClaimWon; won != (tok == call.q.token) {
			t.Errorf("%s: answered %v, row %s held by %q", c.name, got.Outcome, state, tok)
		}
	}
	if lone["won"].Outcome != driver.ClaimWon || lone["later"].Outcome != driver.ClaimLater ||
		lone["early"].Outcome != driver.ClaimEarly || lone["claimed"].Outcome != driver.ClaimGone {
		t.Fatalf("the cases do not cover every answer: %+v", lone)
	}
}

// TestConcurrentClaimsHaveOneWinner: many claimers claiming the same
// tasks at once, their claims combined, win each task once.
func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	ctx := context.Background()
	s := combineStore(t)
	const tasks, claimers = 40, 8
	for i := range tasks {
		if _, err := s.Schedule(ctx, Task{ID: fmt.Sprint("t", i), Kind: "k", Due: time.Now().Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	wins := make([]int, tasks)
	var (
		mu sync.Mutex // guards wins
		wg sync.WaitGroup
	)
	errs := make(chan error, claimers*tasks)
	for w := range claimers {
		wg.Go(func() {
			for i := range tasks {
				id := fmt.Sprint("t", (i+w*5)%tasks)
				c, err := s.Claim(ctx, id, fmt.Sprint("owner-", w), time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if c.Outcome == ClaimWon {
					mu.Lock()
					wins[(i+w*5)%tasks]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, n := range wins {
		if n != 1 {
			t.Errorf("task t%d won %d times", i, n)
		}
	}
}

// TestCanceledClaimIsNotHeld: a claimer that gave up while its claim was
// in a combined statement gets its context's error, and the task it won
// there is pending again, held by no one.
func TestCanceledClaimIsNotHeld(t *testing.T) {
	ctx := context.Background()
	s := combineStore(t)
	for _, id := range []string{"kept", "given-up"} {
		if _, err := s.Schedule(ctx, Task{ID: id, Kind: "k", Due: time.Now().Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	calls := []*batchCall[claimAsk, claimGot]{
		{ctx: ctx, q: claimAsk{id: "kept", token: "a", lease: time.Hour}},
		{ctx: canceled, q: claimAsk{id: "given-up", token: "b", lease: time.Hour}},
	}
	s.claimCombined(ctx, calls)
	if calls[0].err != nil || calls[0].a.c.Outcome != ClaimWon {
		t.Fatalf("the live claim: %+v, %v; want won", calls[0].a.c, calls[0].err)
	}
	if calls[1].err != context.Canceled || calls[1].a.c.won {
		t.Fatalf("the canceled claim: %+v, %v; want context.Canceled", calls[1].a, calls[1].err)
	}
	var state string
	var tok *string
	if err := s.pool.QueryRow(ctx, `SELECT state, lease_token FROM stpe_tasks WHERE id = 'given-up'`).Scan(&state, &tok); err != nil {
		t.Fatal(err)
	}
	if state != "pending" || tok != nil {
		t.Fatalf("the canceled claim's task: %s held by %v; want pending, held by no one", state, tok)
	}
}
