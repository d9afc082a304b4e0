package pgdriver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// TestReapCountsManyRunsOfOneTimelineRow: a reap that takes back more
// runs than there are partitions, all of one kind, counts them all, each
// timeline row updated once with the sum of its runs.
func TestReapCountsManyRunsOfOneTimelineRow(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	const runs = 20
	for i := range runs {
		id := fmt.Sprint("t", i)
		mustSchedule(t, s, dueTask(id))
		mustClaim(t, s, id)
		expireLease(t, pool, id)
	}
	lost, err := s.ReapExpired(ctx, nil, runs, 5, driver.Timeline{Minute: 9, TTL: time.Hour})
	if err != nil || len(lost) != runs {
		t.Fatalf("ReapExpired = %d runs, %v; want %d", len(lost), err, runs)
	}
	var counted int
	if err := pool.QueryRow(ctx, `SELECT sum(count) FROM stpe_timeline WHERE minute = 9 AND field = 'l'`).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if counted != runs {
		t.Fatalf("lost runs counted: %d, want %d", counted, runs)
	}
}
