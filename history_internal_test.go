package scheduler

import (
	"sync"
	"testing"
	"time"
)

// TestInternalRunHistoryCountsEveryRunOfANewSecond records runs of a new
// second from many goroutines at once, as the first runs after a second
// boundary do: each must be counted, none cleared away by the run that
// claims the slot for that second.
func TestInternalRunHistoryCountsEveryRunOfANewSecond(t *testing.T) {
	s, err := New(1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.ShutdownNow()
	s.RunHistory(time.Second) // switches the history on
	const runners = 8
	for sec := int64(1); sec <= 500; sec++ {
		rec := runRecord{started: sec * int64(time.Second), due: sec * int64(time.Second)}
		var start, done sync.WaitGroup
		start.Add(1)
		for range runners {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				s.recordRun(&rec, nil)
			}()
		}
		start.Done()
		done.Wait()
		sl := &s.history.Load().slots[slotOf(sec)]
		counted := 0
		for i := range sl.late {
			counted += int(sl.late[i].Load())
		}
		if sl.second.Load() != sec+1 || counted != runners {
			t.Fatalf("second %d: slot holds second %d with %d runs, want %d runs", sec, sl.second.Load()-1, counted, runners)
		}
	}
}
