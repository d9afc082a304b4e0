package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// What the store keeps beyond a task's state: kinds, done records, the
// lease owner and the run history, paused kinds.

func TestListByKindAndDoneRecordsWithTheirHistory(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		ran := make(chan string, 4)
		w := f.worker("mail", func(_ context.Context, task cluster.Task) error { ran <- task.ID; return nil },
			cluster.WithKeepDone(time.Hour, 100))
		for _, id := range []string{"m1", "m2"} {
			f.schedule("mail", id, []byte("hi "+id), time.Now())
		}
		for range 2 {
			recv(t, ran, "a mail run")
		}
		f.waitState("m1", cluster.Done)
		f.waitState("m2", cluster.Done)
		for _, id := range []string{"s1", "s2", "s3"} {
			f.schedule("sms", id, nil, time.Now().Add(time.Hour))
		}
		f.schedule("mail", "m3", nil, time.Now().Add(time.Hour))

		var page listJSON
		f.ctlJSON(0, &page, "list", "-kind", "sms", "-limit", "2")
		if page.Kind != "sms" || len(page.Tasks) != 2 || page.Next == "" {
			t.Fatalf("list -kind sms: %+v", page)
		}
		next := page.Next
		f.ctlJSON(0, &page, "list", "-kind", "sms", "-cursor", next)
		if len(page.Tasks) != 1 || page.Tasks[0].ID != "s3" || page.Next != "" {
			t.Fatalf("list -kind sms, page 2: %+v", page)
		}
		wantExit(t, f.ctl("list", "-kind", "mail", "-cursor", next), 2, "malformed cursor")

		f.ctlJSON(0, &page, "list", "-state", "done", "-kind", "mail")
		var ids []string
		for _, task := range page.Tasks {
			ids = append(ids, task.ID)
			if task.State != "done" || task.Finished == nil || len(task.History) != 1 {
				t.Fatalf("done record %+v", task)
			}
			h := task.History[0]
			if h.Node != w.Name() || h.Outcome != "succeeded" || h.End.Before(h.Start) || h.Error != "" {
				t.Fatalf("history %+v, want one success on %s", h, w.Name())
			}
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"m1", "m2"}) {
			t.Fatalf("done mail: %v", ids)
		}
		r := f.ctl("show", "m1")
		wantOK(t, r)
		for _, want := range []string{"State:       done", "Finished:    ", "History:     last 1 run(s)", w.Name(), "succeeded"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("show of a done record lacks %q:\n%s", want, r.stdout)
			}
		}

		// Delete removes a done record; purge -state done the rest.
		wantOK(t, f.ctl("delete", "m1"))
		if _, ok := f.get("m1"); ok {
			t.Fatal("deleted done record still stored")
		}
		var purged purgeJSON
		f.ctlJSON(0, &purged, "purge", "-state", "done", "-before", "+1m")
		if purged.State != "done" || purged.Removed != 1 {
			t.Fatalf("purge -state done: %+v", purged)
		}
		if _, ok := f.get("m2"); ok {
			t.Fatal("purged done record still stored")
		}
	})
}

func TestShowRunningTaskNamesItsOwnerAndDeadTaskItsFailedRun(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.deadTasks("mail", "d")
		var task taskJSON
		f.ctlJSON(0, &task, "show", "d")
		if len(task.History) != 1 || task.History[0].Outcome != "failed" || !strings.Contains(task.History[0].Error, "boom") || task.History[0].Node == "" {
			t.Fatalf("history of a dead task: %+v", task.History)
		}

		started, release := make(chan string, 1), make(chan struct{})
		defer close(release)
		w := f.worker("slow", blockingHandler(started, release))
		f.schedule("slow", "busy", nil, time.Now())
		recv(t, started, "the run of busy")
		f.ctlJSON(0, &task, "show", "busy")
		if task.State != "running" || task.Owner != w.Name() || task.Started == nil || time.Since(*task.Started) > time.Minute {
			t.Fatalf("running task: %+v", task)
		}
		r := f.ctl("show", "busy")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "Owner:       "+w.Name()+", claimed ") {
			t.Fatalf("show of a running task:\n%s", r.stdout)
		}
		r = f.ctl("list", "-state", "running")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "running@"+w.Name()) {
			t.Fatalf("list of running tasks:\n%s", r.stdout)
		}
	})
}

func TestPauseKeepsAKindPendingUntilResume(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		ran := make(chan string, 4)
		f.worker("mail", func(_ context.Context, task cluster.Task) error { ran <- task.ID; return nil })

		var doc pauseJSON
		f.ctlJSON(0, &doc, "pause", "mail")
		if doc != (pauseJSON{Kind: "mail", Paused: true}) {
			t.Fatalf("pause -json: %+v", doc)
		}
		kinds, err := f.node.PausedKinds(context.Background())
		if err != nil || !slices.Equal(kinds, []string{"mail"}) {
			t.Fatalf("paused kinds %v, %v", kinds, err)
		}
		due := time.Now()
		f.schedule("mail", "held", nil, due)
		var task taskJSON
		f.ctlJSON(0, &task, "show", "held")
		if task.State != "pending" || !task.Paused {
			t.Fatalf("task of a paused kind: %+v", task)
		}
		r := f.ctl("list")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "pending,paused") {
			t.Fatalf("list:\n%s", r.stdout)
		}

		r = f.ctl("resume", "mail")
		wantOK(t, r)
		if r.stdout != "mail: resumed\n" {
			t.Fatalf("resume: %q", r.stdout)
		}
		if id := recv(t, ran, "the run after resume"); id != "held" {
			t.Fatalf("ran %s", id)
		}
		if kinds, err := f.node.PausedKinds(context.Background()); err != nil || len(kinds) != 0 {
			t.Fatalf("paused kinds after resume %v, %v", kinds, err)
		}
		wantExit(t, f.ctl("pause", "two words"), 2, "Usage: stpectl pause")
	})
}
