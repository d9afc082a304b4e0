package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cron"
)

// The live nodes and the periodic tasks they declare, as their records in
// Redis show them, and the health of the whole.

// periodicNode starts a node on the fixture's store that handles "mail",
// declares "nightly" (at 03:00) and "tick" (every 200 ms, whose runs it
// reports on ticks); it is stopped when the test ends.
func (f *fixture) periodicNode(ticks chan<- cluster.Task) *cluster.Node {
	f.t.Helper()
	n := f.newNode(cluster.WithLease(2*time.Second), cluster.WithWindow(5*time.Second),
		cluster.WithSweepInterval(time.Second), cluster.WithConcurrency(4), cluster.WithLogger(slog.New(slog.DiscardHandler)))
	ok := func(context.Context, cluster.Task) error { return nil }
	const period = 200 * time.Millisecond
	every := scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Truncate(period).Add(period) })
	for _, err := range []error{
		n.Handle("mail", ok),
		n.Periodic("nightly", cron.MustParse("0 3 * * *"), ok),
		n.Periodic("tick", every, func(_ context.Context, task cluster.Task) error {
			select {
			case ticks <- task:
			default:
			}
			return nil
		}),
		n.Start(context.Background()),
	} {
		if err != nil {
			f.t.Fatal(err)
		}
	}
	f.t.Cleanup(n.StopNow)
	return n
}

func TestNodesListsTheLiveNodes(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.schedule("mail", "a", nil, time.Now().Add(time.Hour)) // a keyspace, with no node
		r := f.ctl("nodes")
		wantOK(t, r)
		if r.stdout != "no live node\n" {
			t.Fatalf("nodes with none: %q", r.stdout)
		}
		var doc nodesJSON
		f.ctlJSON(0, &doc, "nodes")
		if doc.Nodes == nil || len(doc.Nodes) != 0 {
			t.Fatalf("nodes -json with none: %+v", doc)
		}

		n := f.periodicNode(make(chan cluster.Task, 1))
		f.ctlJSON(0, &doc, "nodes")
		if len(doc.Nodes) != 1 {
			t.Fatalf("nodes -json: %+v", doc)
		}
		got := doc.Nodes[0]
		if got.Name != n.Name() || got.PID <= 0 || got.Host == "" || got.Version == "" || got.Concurrency != 4 || got.Stopping ||
			!slices.Equal(got.Kinds, []string{"@nightly", "@tick", "mail"}) || time.Since(got.Started) > time.Minute ||
			got.Expires.Before(got.Heartbeat) {
			t.Fatalf("node %+v", got)
		}
		r = f.ctl("nodes")
		wantOK(t, r)
		if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") ||
			!strings.HasPrefix(lines[1], n.Name()+" ") || !strings.Contains(lines[1], "@nightly,@tick,mail") || !strings.Contains(lines[1], " up ") {
			t.Fatalf("nodes:\n%s", r.stdout)
		}
	})
}

func TestPeriodicListsDeclarationsWithTheirLastRun(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.schedule("mail", "a", nil, time.Now().Add(time.Hour)) // a keyspace, with no node
		r := f.ctl("periodic")
		wantOK(t, r)
		if r.stdout != "no periodic task declared by a live node\n" {
			t.Fatalf("periodic with none: %q", r.stdout)
		}
		ticks := make(chan cluster.Task, 1)
		n := f.periodicNode(ticks)
		tick := recv(t, ticks, "a tick")
		var doc periodicDocJSON
		deadline := time.Now().Add(20 * time.Second)
		for { // the run is recorded just after the handler returns
			f.ctlJSON(0, &doc, "periodic")
			if len(doc.Periodic) == 2 && doc.Periodic[1].LastRun != nil && !doc.Periodic[1].LastRun.Due.Before(tick.Due) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("periodic -json: %+v", doc)
			}
			time.Sleep(20 * time.Millisecond)
		}
		nightly, ticking := doc.Periodic[0], doc.Periodic[1]
		if nightly.Name != "nightly" || nightly.Trigger != "0 3 * * *" || nightly.Next == nil || !slices.Equal(nightly.Nodes, []string{n.Name()}) ||
			nightly.LastRun != nil || nightly.Next.Hour() != 3 && nightly.Next.Local().Hour() != 3 {
			t.Fatalf("nightly: %+v", nightly)
		}
		last := ticking.LastRun
		if ticking.Name != "tick" || last.Node != n.Name() || last.Outcome != "succeeded" || last.Error != "" || last.Ended.Before(last.Started) {
			t.Fatalf("tick: %+v, last run %+v", ticking, last)
		}
		r = f.ctl("periodic")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "nightly") || !strings.Contains(r.stdout, "0 3 * * *") || !strings.Contains(r.stdout, "succeeded ") ||
			!strings.Contains(r.stdout, " on "+n.Name()) {
			t.Fatalf("periodic:\n%s", r.stdout)
		}
	})
}

func TestHealthWantsLiveNodesAndWarnsOfUnhandledKinds(t *testing.T) {
	f := newFixture(t)
	f.schedule("mail", "m", nil, time.Now().Add(time.Hour))
	f.schedule("fax", "x", nil, time.Now().Add(time.Hour))

	// No node: unhealthy, unless -min-nodes 0. (Once the node runs, its
	// periodic occurrences are pending too.)
	var doc healthJSON
	r := f.ctlJSON(1, &doc, "health")
	if doc.OK || doc.Reason != "0 live node(s), want at least 1" || doc.RedisVersion == "" || doc.Nodes != 0 {
		t.Fatalf("health with no node: %+v", doc)
	}
	wantExit(t, r, 1, "stpectl: health: 0 live node(s), want at least 1")
	f.ctlJSON(0, &doc, "health", "-min-nodes", "0")
	if !doc.OK || doc.Reason != "" || doc.Redis != f.srv.Addr || doc.RoundTripMicros <= 0 || doc.Counts.Pending != 2 ||
		len(doc.UnhandledKinds) != 2 {
		t.Fatalf("health -min-nodes 0: %+v", doc)
	}

	f.periodicNode(make(chan cluster.Task, 1))
	f.ctlJSON(0, &doc, "health")
	if !doc.OK || doc.Nodes != 1 || doc.Counts.Pending < 2 || doc.Stopping != 0 || !slices.Equal(doc.UnhandledKinds, []unhandledJSON{{Kind: "fax", Pending: 1}}) {
		t.Fatalf("health with a node: %+v", doc)
	}
	r = f.ctl("health")
	wantOK(t, r)
	for _, want := range []string{"ok\n", "redis:  " + doc.RedisVersion + " at " + f.srv.Addr, "nodes:  1 live, 0 stopping",
		"tasks:  ", "warning: 1 pending task(s) of kind fax, which no live node handles"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("health lacks %q:\n%s", want, r.stdout)
		}
	}
	f.ctlJSON(1, &doc, "health", "-min-nodes", "2")
	if doc.OK || doc.Reason != "1 live node(s), want at least 2" {
		t.Fatalf("health -min-nodes 2: %+v", doc)
	}
	wantExit(t, f.ctl("health", "-min-nodes", "-1"), 2, "-min-nodes -1")
}
