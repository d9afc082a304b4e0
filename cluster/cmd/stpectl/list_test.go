package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestListPagesThroughEveryTaskOnceSoonestFirst(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		base := time.Now().Add(time.Hour).Truncate(time.Second)
		var want []string
		for i := range 7 {
			id := fmt.Sprintf("t%d", i)
			f.schedule("mail", id, []byte(`{"to":"ada"}`), base.Add(time.Duration(7-i)*time.Minute))
			want = append([]string{id}, want...) // later IDs are due sooner
		}
		var got []string
		cursor, pages := "", 0
		for {
			var page listJSON
			f.ctlJSON(0, &page, "list", "-limit", "3", "-cursor", cursor)
			pages++
			if page.State != "pending" {
				t.Fatalf("state %q", page.State)
			}
			for _, task := range page.Tasks {
				got = append(got, task.ID)
				if task.Kind != "mail" || task.State != "pending" || task.Payload.Data != `{"to":"ada"}` || task.Payload.Encoding != "json" {
					t.Fatalf("task %+v", task)
				}
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		if !slices.Equal(got, want) || pages != 3 {
			t.Fatalf("listed %v in %d pages, want %v in 3", got, pages, want)
		}

		// The text listing: a table of the page and the next cursor.
		r := f.ctl("list", "-limit", "2")
		wantOK(t, r)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], "t6 ") ||
			!strings.HasPrefix(lines[2], "t5 ") || !strings.HasPrefix(lines[3], "next: ") {
			t.Fatalf("text listing:\n%s", r.stdout)
		}
		next := strings.TrimPrefix(lines[3], "next: ")
		r = f.ctl("list", "-limit", "10", "-cursor", next)
		wantOK(t, r)
		if !strings.Contains(r.stdout, "t4 ") || strings.Contains(r.stdout, "t5 ") || !strings.Contains(r.stdout, "next: (last page)") {
			t.Fatalf("second text page:\n%s", r.stdout)
		}
	})
}

func TestListDeadShowsLastErrorAndRunningShowsClaimedTasks(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.deadTasks("mail", "d1", "d2")
		var page listJSON
		f.ctlJSON(0, &page, "list", "-state", "dead")
		if len(page.Tasks) != 2 || page.Next != "" {
			t.Fatalf("dead page %+v", page)
		}
		for _, task := range page.Tasks {
			if task.State != "dead" || task.Attempt != 1 || task.MaxRetries != 0 || !strings.Contains(task.LastError, "boom") {
				t.Fatalf("dead task %+v", task)
			}
		}
		r := f.ctl("list", "-state", "dead")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "boom: the mail server said no") {
			t.Fatalf("text listing lacks the last error:\n%s", r.stdout)
		}

		started, release := make(chan string, 1), make(chan struct{})
		defer close(release)
		f.worker("slow", blockingHandler(started, release))
		f.schedule("slow", "r1", []byte("x"), time.Now())
		recv(t, started, "the run of r1")
		f.ctlJSON(0, &page, "list", "-state", "running")
		if len(page.Tasks) != 1 || page.Tasks[0].ID != "r1" || page.Tasks[0].State != "running" {
			t.Fatalf("running page %+v", page)
		}
	})
}

func TestListRefusesAMalformedCursorOrOneOfAnotherState(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		for i := range 3 {
			f.schedule("mail", fmt.Sprint("m", i), nil, time.Now().Add(time.Hour))
		}
		var page listJSON
		f.ctlJSON(0, &page, "list", "-limit", "1")
		if page.Next == "" {
			t.Fatal("no next cursor")
		}
		wantExit(t, f.ctl("list", "-cursor", "!!not-a-cursor"), 2, "malformed cursor", "Usage: stpectl list")
		wantExit(t, f.ctl("list", "-state", "dead", "-cursor", page.Next), 2, "malformed cursor", `it lists state "pending"`)
		wantExit(t, f.ctl("list", "-state", "dead", "-cursor", page.Next), 2, "Usage: stpectl list", `(default "pending")`)
		var doc errorJSON
		f.ctlJSON(2, &doc, "list", "-cursor", "xyz")
		if doc.Reason != "usage" || !strings.Contains(doc.Error, "malformed cursor") {
			t.Fatalf("error document %+v", doc)
		}
	})
}
