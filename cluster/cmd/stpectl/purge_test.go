package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestPurgeRemovesTheDeadOlderThanTheCut(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.deadTasks("mail", "d1", "d2", "d3")
		f.schedule("mail", "alive", nil, time.Now().Add(time.Hour))

		var doc purgeJSON
		f.ctlJSON(0, &doc, "purge", "-older", "1d")
		if doc.State != "dead" || doc.Removed != 0 || time.Since(doc.Before) < 24*time.Hour {
			t.Fatalf("purge -older 1d: %+v", doc)
		}
		r := f.ctl("purge", "-before", "2000-01-01T00:00:00Z")
		wantOK(t, r)
		if !strings.HasPrefix(r.stdout, "purged 0 dead task(s) from before ") {
			t.Fatalf("stdout %q", r.stdout)
		}
		f.ctlJSON(0, &doc, "purge", "-state", "dead", "-before", "+1m")
		if doc.Removed != 3 {
			t.Fatalf("purge -before +1m: %+v", doc)
		}
		c, err := f.node.Counts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.Dead != 0 || c.Pending != 1 {
			t.Fatalf("after purge: %+v", c)
		}
	})
}
