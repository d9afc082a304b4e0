package main

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

func TestRunMakesAPendingTaskDueFirstAndKeepsItsDueTime(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		soon, later := time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)
		f.schedule("mail", "soon", nil, soon)
		f.schedule("mail", "later", nil, later)
		r := f.ctl("run", "later")
		wantOK(t, r)
		if r.stdout != "later: due now\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
		page, err := f.node.List(context.Background(), cluster.ListQuery{State: cluster.Pending, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 2 || page.Tasks[0].ID != "later" || !page.Tasks[0].Due.Equal(later.Truncate(time.Microsecond)) {
			t.Fatalf("after run: %+v", page.Tasks)
		}
		var doc actionJSON
		f.ctlJSON(0, &doc, "run", "soon")
		if doc != (actionJSON{ID: "soon", Action: "run"}) {
			t.Fatalf("run -json: %+v", doc)
		}
	})
}

func TestRefusedActionsExitOneWithTheModulesError(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.deadTasks("mail", "dead1")
		f.schedule("mail", "waiting", nil, time.Now().Add(time.Hour))
		for _, tc := range []struct {
			args   []string
			reason string
			stderr string
		}{
			{[]string{"run", "dead1"}, "wrong_state", "stpectl: run dead1: the task is dead"},
			{[]string{"reschedule", "dead1", "+1h"}, "wrong_state", "stpectl: reschedule dead1: the task is dead"},
			{[]string{"retry", "waiting"}, "wrong_state", "stpectl: retry waiting: the task is pending"},
			{[]string{"delete", "waiting"}, "wrong_state", "stpectl: delete waiting: the task is pending"},
			{[]string{"run", "ghost"}, "not_found", "stpectl: run ghost: no such task"},
			{[]string{"reschedule", "ghost", "+1h"}, "not_found", "stpectl: reschedule ghost: no such task"},
			{[]string{"retry", "ghost"}, "not_found", "stpectl: retry ghost: no such task"},
			{[]string{"delete", "ghost"}, "not_found", "stpectl: delete ghost: no such task"},
			{[]string{"cancel", "ghost"}, "not_found", "stpectl: cancel ghost: no such task"},
		} {
			wantExit(t, f.ctl(tc.args...), 1, tc.stderr)
			var doc errorJSON
			f.ctlJSON(1, &doc, tc.args...)
			if doc.Reason != tc.reason || !strings.Contains(doc.Error, tc.stderr) {
				t.Fatalf("stpectl %v -json: %+v, want reason %s", tc.args, doc, tc.reason)
			}
		}
		// Nothing refused changed anything.
		if info, _ := f.get("dead1"); info.State != cluster.Dead {
			t.Fatalf("dead1 is %s", info.State)
		}
		if info, _ := f.get("waiting"); info.State != cluster.Pending {
			t.Fatalf("waiting is %s", info.State)
		}
	})
}

func TestRescheduleTakesADurationFromNowOrAnRFC3339Time(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.schedule("mail", "m", nil, time.Now().Add(time.Hour))

		before := time.Now()
		wantOK(t, f.ctl("reschedule", "m", "+10m"))
		after := time.Now()
		info, _ := f.get("m")
		if info.Due.Before(before.Add(10*time.Minute).Truncate(time.Microsecond)) || info.Due.After(after.Add(10*time.Minute)) {
			t.Fatalf("due %v, want 10 minutes after a time between %v and %v", info.Due, before, after)
		}

		at := time.Date(2031, 6, 7, 8, 9, 10, 123456000, time.UTC)
		var doc actionJSON
		f.ctlJSON(0, &doc, "reschedule", "m", "2031-06-07T10:09:10.123456+02:00")
		if doc.ID != "m" || doc.Action != "reschedule" || doc.Due == nil || !doc.Due.Equal(at) {
			t.Fatalf("reschedule -json: %+v", doc)
		}
		if info, _ := f.get("m"); !info.Due.Equal(at) {
			t.Fatalf("due %v, want %v", info.Due, at)
		}

		// A time in the past (after "--", as it starts with "-") means run now.
		wantOK(t, f.ctl("reschedule", "m", "--", "-5m"))
		info, _ = f.get("m")
		if time.Since(info.Due) < 4*time.Minute {
			t.Fatalf("due %v, want about 5 minutes ago", info.Due)
		}

		// A malformed time changes nothing.
		wantExit(t, f.ctl("reschedule", "m", "2031-06-07"), 2, `malformed time "2031-06-07"`)
		if info2, _ := f.get("m"); !info2.Due.Equal(info.Due) {
			t.Fatal("a refused reschedule moved the task")
		}
	})
}

func TestRetryGivesADeadTaskItsRetriesAgainAndDeleteRemovesOne(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.deadTasks("mail", "again", "gone")
		var doc actionJSON
		f.ctlJSON(0, &doc, "retry", "again")
		if doc != (actionJSON{ID: "again", Action: "retry"}) {
			t.Fatalf("retry -json: %+v", doc)
		}
		info, ok := f.get("again")
		if !ok || info.State != cluster.Pending || info.Attempt != 0 {
			t.Fatalf("after retry: %v %+v", ok, info)
		}
		r := f.ctl("delete", "gone")
		wantOK(t, r)
		if r.stdout != "gone: deleted\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
		if _, ok := f.get("gone"); ok {
			t.Fatal("deleted task still stored")
		}
		// The retried task runs again, on a worker that now succeeds.
		done := make(chan string, 1)
		f.worker("mail", func(_ context.Context, task cluster.Task) error { done <- task.ID; return nil })
		if id := recv(t, done, "the retried run"); id != "again" {
			t.Fatalf("ran %s", id)
		}
	})
}

func TestCancelStopsARunInFlight(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		started, release := make(chan string, 1), make(chan struct{})
		defer close(release)
		ended := make(chan error, 1)
		f.worker("slow", func(ctx context.Context, task cluster.Task) error {
			started <- task.ID
			select {
			case <-release:
			case <-ctx.Done():
				ended <- context.Cause(ctx)
			}
			return nil
		})
		f.schedule("slow", "busy", nil, time.Now())
		recv(t, started, "the run of busy")
		var doc cancelJSON
		f.ctlJSON(0, &doc, "cancel", "busy")
		if doc != (cancelJSON{ID: "busy", Removed: true, WasRunning: true}) {
			t.Fatalf("cancel -json: %+v", doc)
		}
		if cause := recv(t, ended, "the canceled run's ctx to end"); cause == nil {
			t.Fatal("the canceled run's ctx ended without a cause")
		}
		if _, ok := f.get("busy"); ok {
			t.Fatal("canceled task still stored")
		}

		f.schedule("slow", "idle", nil, time.Now().Add(time.Hour))
		r := f.ctl("cancel", "idle")
		wantOK(t, r)
		if r.stdout != "idle: canceled\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
		if _, ok := f.get("idle"); ok {
			t.Fatal("canceled task still stored")
		}
	})
}

func TestCountsCountsEachState(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.deadTasks("mail", "d")
		for _, id := range []string{"a", "b", "c"} {
			f.schedule("mail", id, nil, time.Now().Add(time.Hour))
		}
		f.schedule("sms", "s", nil, time.Now().Add(time.Hour))
		f.schedule("fax", "x", nil, time.Now().Add(time.Hour))
		if err := f.node.Pause(context.Background(), "fax"); err != nil {
			t.Fatal(err)
		}
		var doc countsDocJSON
		f.ctlJSON(0, &doc, "counts")
		want := countsDocJSON{countsJSON: countsJSON{Pending: 5, Dead: 1}, Kinds: []kindCountsJSON{
			{Kind: "fax", countsJSON: countsJSON{Pending: 1}, Paused: true},
			{Kind: "mail", countsJSON: countsJSON{Pending: 3, Dead: 1}},
			{Kind: "sms", countsJSON: countsJSON{Pending: 1}},
		}}
		if !reflect.DeepEqual(doc, want) {
			t.Fatalf("counts -json: %+v, want %+v", doc, want)
		}
		r := f.ctl("counts")
		wantOK(t, r)
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		if len(lines) != 5 || !strings.Contains(lines[1], "fax") || !strings.Contains(lines[1], "paused") ||
			strings.Join(strings.Fields(lines[2]), " ") != "mail 3 0 1 0" || strings.Join(strings.Fields(lines[4]), " ") != "(all) 5 0 1 0" {
			t.Fatalf("counts:\n%s", r.stdout)
		}
	})
}
