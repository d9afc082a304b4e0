package manualclock

// The clock's behaviour is tested through schedulertest.ManualClock, its
// exported face (schedulertest/manualclock_test.go). These tests cover what
// only this package's users see: Dues, and that moving the clock allocates
// nothing while nobody waits in BlockUntilWaiters, which the scheduler's
// allocation tests rely on.

import (
	"slices"
	"testing"
	"time"
)

var epoch = time.Unix(0, 0)

func TestDuesListsLiveTimersEarliestFirstTiesInArmingOrder(t *testing.T) {
	c := New(epoch)
	late := c.NewTimer(3 * time.Second)
	c.NewTimer(time.Second)
	stop := c.AfterFunc(2*time.Second, func() {})
	c.NewTimer(time.Second)
	c.NewTimer(0) // fires at once: never live

	want := []time.Time{epoch.Add(time.Second), epoch.Add(time.Second), epoch.Add(2 * time.Second), epoch.Add(3 * time.Second)}
	if got := c.Dues(); !slices.Equal(got, want) {
		t.Fatalf("Dues() = %v, want %v", got, want)
	}

	late.Stop()
	stop()
	c.Advance(time.Second)
	if got := c.Dues(); len(got) != 0 {
		t.Fatalf("Dues() after stopping two and firing two = %v, want none", got)
	}
}

func TestArmingAndFiringAllocateNothingWhileNobodyWaits(t *testing.T) {
	c := New(epoch)
	tm := c.NewTimer(time.Second)
	c.Advance(time.Second)
	<-tm.C()
	allocs := testing.AllocsPerRun(1000, func() {
		tm.ResetAt(c.Now().Add(time.Second))
		c.Advance(time.Second)
		<-tm.C()
	})
	if allocs != 0 {
		t.Fatalf("a ResetAt, Advance and receive allocate %v times, want 0", allocs)
	}
}
