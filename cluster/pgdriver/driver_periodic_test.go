package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestPeriodicStatesReadTheOccurrencesDueTimesExactly: the first, the
// overdue and the onwards occurrence of a periodic task are its pending
// occurrences' due times to the nanosecond, as their IDs hold them (the
// columns keep microseconds), chosen at the time asked.
func TestPeriodicStatesReadTheOccurrencesDueTimesExactly(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	d := newConformanceDriver(t, pool, s.Partitions())
	now := time.Now()
	dues := []time.Time{now.Add(-2*time.Hour + 101), now.Add(-time.Hour + 202), now.Add(time.Hour + 303)}
	for _, due := range dues {
		mustSchedule(t, s, pgdriver.Task{ID: driver.OccurrenceID("nightly", due), Kind: "@nightly",
			Payload: []byte{}, Due: due, Fixed: true})
	}
	states, err := d.PeriodicStates(ctx, []string{"nightly", "other"}, now)
	if err != nil {
		t.Fatal(err)
	}
	got := states["nightly"]
	if !got.First.Equal(dues[0]) || !got.Overdue.Equal(dues[1]) || !got.Onwards.Equal(dues[2]) {
		t.Fatalf("states = %+v, want first %v, overdue %v, onwards %v", got, dues[0], dues[1], dues[2])
	}
	if states["other"] != (driver.PeriodicState{}) {
		t.Fatalf("a task with nothing stored has %+v", states["other"])
	}
}
