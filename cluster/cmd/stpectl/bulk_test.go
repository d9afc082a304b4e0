package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The bulk forms: run, retry, cancel and delete with -all and a
// selection, -dry-run, and purge of one kind.

func TestBulkActionsActOnTheSelectionAndDryRunChangesNothing(t *testing.T) {
	onEachStore(t, bulkActions)
}

// bulkActions runs each bulk form on f and checks the result through the
// module.
func bulkActions(t *testing.T, f *fixture) {
	t.Helper()
	f.deadTasks("mail", "m1", "m2", "m3")
	f.deadTasks("fax", "x1", "x2")
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		f.schedule("sms", id, nil, time.Now().Add(time.Hour))
	}
	counts := func() cluster.Counts {
		c, err := f.node.Counts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	var doc bulkJSON
	f.ctlJSON(0, &doc, "retry", "-all", "-state", "dead", "-kind", "mail", "-dry-run")
	if !doc.DryRun || doc.Matched != 3 || doc.Changed != 0 || doc.Action != "retry" || doc.Kind != "mail" || doc.State != "dead" {
		t.Fatalf("retry -all -dry-run: %+v", doc)
	}
	if c := counts(); c.Dead != 5 {
		t.Fatalf("a dry run changed something: %+v", c)
	}
	r := f.ctl("retry", "-all", "-kind", "mail", "-dry-run")
	wantOK(t, r)
	if r.stdout != "would retry 3 dead task(s) of kind mail (dry run: nothing changed)\n" {
		t.Fatalf("retry -all -dry-run: %q", r.stdout)
	}
	r = f.ctl("retry", "-all", "-kind", "mail")
	wantOK(t, r)
	if r.stdout != "retried 3 dead task(s) of kind mail\n" {
		t.Fatalf("retry -all: %q", r.stdout)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if info, _ := f.get(id); info.State != cluster.Pending {
			t.Fatalf("%s after retry -all: %s", id, info.State)
		}
	}

	f.ctlJSON(0, &doc, "delete", "-all", "-state", "dead", "-before", "+1m")
	if doc.Matched != 2 || doc.Changed != 2 || doc.Before == nil {
		t.Fatalf("delete -all: %+v", doc)
	}
	if c := counts(); c.Dead != 0 {
		t.Fatalf("after delete -all: %+v", c)
	}

	r = f.ctl("run", "-all", "-kind", "sms")
	wantOK(t, r)
	if r.stdout != "made due now 4 pending task(s) of kind sms\n" {
		t.Fatalf("run -all: %q", r.stdout)
	}

	wantExit(t, f.ctl("cancel", "-all", "-kind", "sms"), 2, "stpectl: cancel: -all wants a -state (pending, running, dead or done)")
	f.ctlJSON(0, &doc, "cancel", "-all", "-state", "pending", "-kind", "mail")
	if doc.Matched != 3 || doc.Changed != 3 {
		t.Fatalf("cancel -all: %+v", doc)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if _, ok := f.get(id); ok {
			t.Fatalf("%s is still stored after cancel -all", id)
		}
	}

	// Bad usage of the bulk forms, refused before anything changes.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"retry", "s1", "-kind", "sms"}, "stpectl: retry: -kind goes with -all"},
		{[]string{"retry", "-all", "s1"}, "stpectl: retry: -all takes no argument, got 1"},
		{[]string{"retry"}, "stpectl: retry: want 1 argument(s) (ID) or -all, got 0"},
		{[]string{"retry", "-all", "-state", "pending"}, `stpectl: retry: -state "pending": want dead`},
		{[]string{"delete", "-all", "-state", "running"}, `stpectl: delete: -state "running": want dead or done`},
		{[]string{"run", "-all", "-before", "tomorrow"}, `malformed time "tomorrow"`},
	} {
		wantExit(t, f.ctl(tc.args...), 2, tc.want, "Usage: stpectl "+tc.args[0]+" ID | -all")
	}

	// A kind that nothing knows is refused, not an empty success.
	r = f.ctl("retry", "-all", "-kind", "nosuchkind")
	wantExit(t, r, 1, `stpectl: retry -all: unknown kind "nosuchkind"`)
	var e errorJSON
	f.ctlJSON(1, &e, "resume", "nosuchkind")
	if e.Reason != "unknown_kind" {
		t.Fatalf("resume nosuchkind: %+v", e)
	}
	wantExit(t, f.ctl("resume", "nosuchkind"), 1, `stpectl: resume nosuchkind: unknown kind "nosuchkind": `)

	// purge of one kind, and its dry run.
	f.deadTasks("mail", "p1", "p2")
	f.deadTasks("fax", "p3")
	var purged purgeJSON
	f.ctlJSON(0, &purged, "purge", "-kind", "mail", "-before", "+1m", "-dry-run")
	if !purged.DryRun || purged.Matched != 2 || purged.Removed != 0 {
		t.Fatalf("purge -kind -dry-run: %+v", purged)
	}
	r = f.ctl("purge", "-kind", "mail", "-older", "0s")
	wantOK(t, r)
	if !strings.HasPrefix(r.stdout, "purged 2 dead task(s) of kind mail from before ") {
		t.Fatalf("purge -kind: %q", r.stdout)
	}
	if c := counts(); c.Dead != 1 {
		t.Fatalf("after purge -kind mail: %+v", c)
	}
}
