package pgdriver_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestConcurrentSchedulesAnswerAsAlone: Schedule calls made at once, which
// the store combines into shared inserts, each get the answer a call
// alone gets: a fresh ID is Created, the same task under one ID is
// Created once and Exists for the rest, and different tasks under one ID
// are Created once and Conflict for the rest; each stored task is the
// one that was Created.
func TestConcurrentSchedulesAnswerAsAlone(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	const callers, rounds = 16, 20
	type answer struct {
		id  string
		r   pgdriver.ScheduleResult
		err error
		pay string
	}
	answers := make(chan answer, callers*rounds*3)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range rounds {
				r := strconv.Itoa(round)
				for _, task := range []pgdriver.Task{
					withID(dueTask("x"), "fresh-"+r+"-"+strconv.Itoa(c)),
					withID(dueTask("x"), "same-"+r),
					withPayload(withID(dueTask("x"), "clash-"+r), []byte(strconv.Itoa(c))),
				} {
					res, err := s.Schedule(ctx, task)
					answers <- answer{task.ID, res, err, string(task.Payload)}
				}
			}
		}()
	}
	wg.Wait()
	close(answers)
	created := map[string]string{}
	others := map[string]map[pgdriver.ScheduleResult]int{}
	for a := range answers {
		if a.err != nil {
			t.Fatalf("Schedule(%s): %v", a.id, a.err)
		}
		if a.r == pgdriver.Created {
			if _, twice := created[a.id]; twice {
				t.Fatalf("%s created twice", a.id)
			}
			created[a.id] = a.pay
			continue
		}
		if others[a.id] == nil {
			others[a.id] = map[pgdriver.ScheduleResult]int{}
		}
		others[a.id][a.r]++
	}
	for round := range rounds {
		r := strconv.Itoa(round)
		for _, id := range []string{"same-" + r, "clash-" + r} {
			if _, ok := created[id]; !ok {
				t.Fatalf("%s never created", id)
			}
		}
		if got := others["same-"+r]; got[pgdriver.Exists] != callers-1 || len(got) != 1 {
			t.Errorf("same-%s: the others got %v, want %d exists", r, got, callers-1)
		}
		if got := others["clash-"+r]; got[pgdriver.Conflict] != callers-1 || len(got) != 1 {
			t.Errorf("clash-%s: the others got %v, want %d conflicts", r, got, callers-1)
		}
		if got := mustGet(t, s, "clash-"+r); string(got.Payload) != created["clash-"+r] {
			t.Errorf("clash-%s stores payload %q, created with %q", r, got.Payload, created["clash-"+r])
		}
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM stpe_tasks`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := rounds * (callers + 2); stored != want || len(created) != want {
		t.Fatalf("%d tasks stored, %d created, want %d", stored, len(created), want)
	}
}
