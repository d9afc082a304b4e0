package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// newDriver is the driver of a fresh store (newStore).
func newDriver(t *testing.T) (*pgdriver.Driver, *pgxpool.Pool) {
	t.Helper()
	s, pool := newStore(t)
	d, err := pgdriver.NewDriver(s)
	if err != nil {
		t.Fatal(err)
	}
	return d, pool
}

// newTask is a new task of kind "k" due at past, its ID fixed.
func newTask(id string) pgdriver.NewTask {
	return pgdriver.NewTask{ID: id, Kind: "k", Payload: []byte("p-" + id), Due: past, MaxRetries: 3, FixedID: true}
}

// TestDriverScheduleAnswers: Schedule answers created, exists (the
// metadata is not the task's identity), already done under a done marker,
// and ErrIDConflict for another task under the ID; ScheduleMany answers
// one result per task, a conflict being that task's alone.
func TestDriverScheduleAnswers(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	a := newTask("a")
	if r, err := d.Schedule(ctx, a); err != nil || r != pgdriver.StoredCreated {
		t.Fatalf("Schedule = %v, %v; want created", r, err)
	}
	a.Metadata = "other metadata"
	if r, err := d.Schedule(ctx, a); err != nil || r != pgdriver.StoredExists {
		t.Fatalf("Schedule again = %v, %v; want exists", r, err)
	}
	b := newTask("a")
	b.Kind = "other"
	if _, err := d.Schedule(ctx, b); !errors.Is(err, driver.ErrIDConflict) || err.Error() != `cluster: schedule other: "a": cluster: task ID already used by a different task` {
		t.Fatalf("Schedule of another task = %v; want ErrIDConflict", err)
	}
	tok, _ := mustClaim(t, d.Store(), "a")
	if _, err := d.Store().Complete(ctx, "a", tok, pgdriver.Ending{Retention: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if r, err := d.Schedule(ctx, a); err != nil || r != pgdriver.StoredAlreadyDone {
		t.Fatalf("Schedule of the completed task = %v, %v; want already done", r, err)
	}
	res := d.ScheduleMany(ctx, []pgdriver.NewTask{newTask("m1"), a, b, newTask("m1")})
	want := []string{"1 <nil>", "3 <nil>", "0 conflict", "2 <nil>"}
	for i, r := range res {
		got := fmt.Sprint(r.Stored, " ", r.Err)
		if errors.Is(r.Err, driver.ErrIDConflict) {
			got = fmt.Sprint(r.Stored, " conflict")
		}
		if got != want[i] {
			t.Errorf("ScheduleMany result %d = %s; want %s", i, got, want[i])
		}
	}
}

// TestDriverCancelKeepsAndMarks: Cancel says removed and wasRunning, keeps
// a canceled done record under keep, and leaves a canceled periodic
// occurrence's done marker.
func TestDriverCancelKeepsAndMarks(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	mustSchedule(t, d.Store(), dueTask("run"))
	mustClaim(t, d.Store(), "run")
	keep := driver.KeepDone{Age: time.Hour, Max: 5}
	if removed, running, err := d.Cancel(ctx, "run", "k", time.Hour, keep); err != nil || !removed || !running {
		t.Fatalf("Cancel = %v, %v, %v; want removed, running", removed, running, err)
	}
	if got := mustGet(t, d.Store(), "run"); got.State != pgdriver.Done || got.History[len(got.History)-1].Outcome != driver.OutcomeCanceled {
		t.Fatalf("canceled task = %+v; want a done record, canceled", got)
	}
	if removed, running, err := d.Cancel(ctx, "never", "", time.Hour, keep); err != nil || removed || running {
		t.Fatalf("Cancel of nothing = %v, %v, %v", removed, running, err)
	}
	occ := occurrence(7)
	mustSchedule(t, d.Store(), occ)
	if removed, _, err := d.Cancel(ctx, occ.ID, occ.Kind, time.Hour, driver.KeepDone{}); err != nil || !removed {
		t.Fatalf("Cancel of an occurrence = %v, %v", removed, err)
	}
	nt := pgdriver.NewTask{ID: occ.ID, Kind: occ.Kind, Payload: occ.Payload, Due: occ.Due, FixedID: true}
	if r, err := d.Schedule(ctx, nt); err != nil || r != pgdriver.StoredAlreadyDone {
		t.Fatalf("Schedule of the canceled occurrence = %v, %v; want already done", r, err)
	}
}

// TestDriverDoneToTrimThenRemove: DoneToTrim lists, by partition, the
// records finished before olderThan and the oldest past the newest max,
// at most batch per partition each way (full when more); RemoveDone
// removes those still done records, and skips one stored again.
func TestDriverDoneToTrimThenRemove(t *testing.T) {
	ctx := context.Background()
	d, pool := newDriver(t)
	s := d.Store()
	var ids []string
	for i := range 8 {
		ids = append(ids, fmt.Sprintf("t%d", i))
	}
	completeAll(t, s, pgdriver.Ending{Keep: driver.KeepDone{Age: time.Hour, Max: 100}}, ids...)
	for i, id := range ids { // t0 oldest, ten minutes apart
		exec(t, pool, `UPDATE stpe_tasks SET finished_at = statement_timestamp() - $2::integer * interval '10 minutes' WHERE id = $1`, id, len(ids)-i)
	}
	var dbNow time.Time
	if err := pool.QueryRow(ctx, `SELECT statement_timestamp()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	// t0 and t1 are older than 65 minutes; of the other six, the newest
	// three are kept: t2, t3, t4 are past max.
	victims, full, err := d.DoneToTrim(ctx, dbNow.Add(-65*time.Minute), 3, 100)
	if err != nil || full {
		t.Fatalf("DoneToTrim = %v, %v, %v", victims, full, err)
	}
	var listed []string
	for p, list := range victims {
		for _, id := range list {
			if s.PartitionOf(id) != p {
				t.Errorf("%s listed under partition %d, is of %d", id, p, s.PartitionOf(id))
			}
			listed = append(listed, id)
		}
	}
	if len(listed) != 5 || len(doneIDs(t, s, listed...)) != 5 || len(doneIDs(t, s, "t5", "t6", "t7")) != 3 {
		t.Fatalf("DoneToTrim listed %v; want t0 to t4", listed)
	}
	if _, err := s.Schedule(ctx, dueTask("t0")); err != nil { // replaces t0's done record
		t.Fatal(err)
	}
	if n, err := d.RemoveDone(ctx, victims); err != nil || n != 4 {
		t.Fatalf("RemoveDone = %d, %v; want 4 (t0 is pending again)", n, err)
	}
	if got := mustGet(t, s, "t0"); got.State != pgdriver.Pending {
		t.Fatalf("t0 = %+v; want pending", got)
	}
	// Two more records in t7's partition: three there, batch 1.
	var same []string
	for i := 0; len(same) < 2; i++ {
		if id := fmt.Sprintf("u%d", i); s.PartitionOf(id) == s.PartitionOf("t7") {
			same = append(same, id)
		}
	}
	completeAll(t, s, pgdriver.Ending{Keep: driver.KeepDone{Age: time.Hour, Max: 100}}, same...)
	victims, full, err = d.DoneToTrim(ctx, dbNow.Add(time.Hour), 100, 1)
	if err != nil || !full || len(victims[s.PartitionOf("t7")]) != 1 {
		t.Fatalf("DoneToTrim of three records of a partition, batch 1 = %v, full %v, %v; want one listed, full", victims, full, err)
	}
}
