package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/redis/go-redis/v9"
)

// Every command on every Redis layout: one server, a three-master Redis
// Cluster (where a command that spoke to one server only would meet
// MOVED, or count one master's tasks), and a master found through
// Sentinel; and on PostgreSQL. The built binary runs each.

func TestEveryCommandOnOneServer(t *testing.T) {
	everyCommand(t, newFixture(t))
}

func TestEveryCommandOnPostgres(t *testing.T) {
	everyCommand(t, newPostgresFixture(t))
}

func TestEveryCommandOnARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	f := newClusterFixture(t, c, "{ctl}")
	everyCommand(t, f)

	// The health of a cluster: every master answered.
	var doc healthJSON
	f.ctlJSON(0, &doc, "health", "-min-nodes", "0")
	if doc.Layout != "cluster" || len(doc.Masters) != redistest.ClusterMasters {
		t.Fatalf("health of a Redis Cluster: %+v", doc)
	}
	// The other address forms reach it too.
	addrs := c.Addrs()
	for _, args := range [][]string{
		{"-redis", addrs[0], "-cluster"},
		{"-redis", "redis+cluster://" + addrs[0] + "?addr=" + addrs[1]},
	} {
		var counts countsDocJSON
		r := runCtl(t, nil, append(args, "-prefix", f.prefix, "-json", "counts")...)
		wantOK(t, r)
		decodeOne(t, r.stdout, &counts)
		if counts.Pending == 0 {
			t.Fatalf("stpectl %v counts: %+v", args, counts)
		}
	}
	r := runCtl(t, []string{"STPE_REDIS_URL=" + addrs[1], "STPE_REDIS_CLUSTER=1"}, "-prefix", f.prefix, "counts")
	wantOK(t, r)
}

func TestEveryCommandThroughSentinel(t *testing.T) {
	master := redistest.Start(t, redistest.Options{})
	sentinel := redistest.StartSentinel(t, master, "mymaster")
	f := newFixtureOn(t, master, []string{"-redis", sentinel.Addr, "-sentinel-master", "mymaster"},
		func() redis.UniversalClient { return master.Client() })
	everyCommand(t, f)
	var doc healthJSON
	f.ctlJSON(0, &doc, "health", "-min-nodes", "0")
	if doc.Layout != "sentinel" || len(doc.Masters) != 1 {
		t.Fatalf("health through Sentinel: %+v", doc)
	}
}

// everyCommand runs each command of stpectl on f's store and checks what
// it says against what the cluster module reads.
func everyCommand(t *testing.T, f *fixture) {
	t.Helper()
	const stored = 30
	due := time.Now().Add(time.Hour)
	for i := range stored {
		kind := "mail"
		if i%3 == 0 {
			kind = "sms"
		}
		f.schedule(kind, fmt.Sprintf("task-%02d", i), []byte(fmt.Sprintf(`{"n":%d}`, i)), due.Add(time.Duration(i)*time.Second))
	}
	f.deadTasks("fax", "dead-1", "dead-2")

	var counts countsDocJSON
	f.ctlJSON(0, &counts, "counts")
	if counts.Pending != stored || counts.Dead != 2 || len(counts.Kinds) != 3 {
		t.Fatalf("counts: %+v", counts)
	}
	wantOK(t, f.ctl("counts"))

	// list, a page at a time, sees every task once.
	seen := map[string]bool{}
	for cursor := ""; ; {
		var page listJSON
		f.ctlJSON(0, &page, "list", "-limit", "7", "-cursor", cursor)
		for _, task := range page.Tasks {
			seen[task.ID] = true
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(seen) != stored {
		t.Fatalf("list saw %d tasks, want %d", len(seen), stored)
	}
	var page listJSON
	f.ctlJSON(0, &page, "list", "-state", "dead", "-kind", "fax")
	if len(page.Tasks) != 2 {
		t.Fatalf("list -state dead: %+v", page)
	}
	wantOK(t, f.ctl("list"))

	var task taskJSON
	f.ctlJSON(0, &task, "show", "task-07")
	if task.ID != "task-07" || task.Payload.Encoding != "json" || compactJSON(t, task.Payload.Value) != `{"n":7}` {
		t.Fatalf("show: %+v", task)
	}
	wantOK(t, f.ctl("show", "dead-1"))
	wantExit(t, f.ctl("show", "nobody"), 1, "stpectl: show nobody: no such task\n")

	// health counts the tasks of every master.
	var health healthJSON
	f.ctlJSON(0, &health, "health", "-min-nodes", "0")
	if !health.OK || health.Counts.Pending != stored || health.Counts.Dead != 2 || health.RedisVersion+health.PostgresVersion == "" {
		t.Fatalf("health: %+v", health)
	}

	// A live node, and what it declares.
	f.periodicNode(make(chan cluster.Task, 1))
	var nodes nodesJSON
	f.ctlJSON(0, &nodes, "nodes")
	if len(nodes.Nodes) != 1 {
		t.Fatalf("nodes: %+v", nodes)
	}
	wantOK(t, f.ctl("nodes"))
	var periodic periodicDocJSON
	f.ctlJSON(0, &periodic, "periodic")
	if len(periodic.Periodic) != 2 {
		t.Fatalf("periodic: %+v", periodic)
	}
	f.ctlJSON(0, &health, "health")
	if !health.OK || health.Nodes != 1 {
		t.Fatalf("health with a node: %+v", health)
	}

	// pause and resume, as counts shows.
	wantOK(t, f.ctl("pause", "sms"))
	f.ctlJSON(0, &counts, "counts")
	if !pausedKind(counts, "sms") {
		t.Fatalf("counts after pause: %+v", counts)
	}
	wantOK(t, f.ctl("resume", "sms"))
	f.ctlJSON(0, &counts, "counts")
	if pausedKind(counts, "sms") {
		t.Fatalf("counts after resume: %+v", counts)
	}

	// The actions on one task.
	wantOK(t, f.ctl("reschedule", "task-01", "10m"))
	if info, _ := f.get("task-01"); time.Until(info.Due) > 11*time.Minute || time.Until(info.Due) < 9*time.Minute {
		t.Fatalf("reschedule 10m: due %v", info.Due)
	}
	wantOK(t, f.ctl("retry", "dead-1"))
	if info, _ := f.get("dead-1"); info.State != cluster.Pending {
		t.Fatalf("retry: %s", info.State)
	}
	wantOK(t, f.ctl("cancel", "dead-1"))
	wantOK(t, f.ctl("cancel", "task-02"))
	if _, ok := f.get("task-02"); ok {
		t.Fatal("cancel left task-02")
	}
	wantOK(t, f.ctl("delete", "dead-2"))
	wantOK(t, f.ctl("run", "task-04"))
	var purged purgeJSON
	f.ctlJSON(0, &purged, "purge", "-before", "+1m")
	if purged.Removed != 0 {
		t.Fatalf("purge: %+v", purged)
	}

	// A bulk action over every partition: on a Redis Cluster they lie on
	// every master.
	var bulk bulkJSON
	f.ctlJSON(0, &bulk, "run", "-all", "-kind", "mail")
	if bulk.Matched == 0 || bulk.Changed != bulk.Matched {
		t.Fatalf("run -all: %+v", bulk)
	}
	f.ctlJSON(0, &bulk, "cancel", "-all", "-state", "pending", "-kind", "sms", "-dry-run")
	if bulk.Matched != stored/3 {
		t.Fatalf("cancel -all -dry-run: %+v", bulk)
	}

	if f.pgURL != "" {
		// migrate: the schema is at the latest version already.
		var migrated migratePostgresJSON
		f.ctlJSON(0, &migrated, "migrate")
		if migrated.FromVersion != pgdriver.LatestVersion() || migrated.SchemaVersion != pgdriver.LatestVersion() {
			t.Fatalf("migrate: %+v", migrated)
		}
		return
	}
	// migrate: nothing of an earlier version to move; it records the layout.
	var migrated migrateJSON
	f.ctlJSON(0, &migrated, "migrate", "-force")
	if migrated.Pending+migrated.Dead+migrated.Running+migrated.Done != 0 {
		t.Fatalf("migrate: %+v", migrated)
	}
	if !strings.Contains(f.ctl("migrate", "-force").stdout, "moved 0 task(s)") {
		t.Fatal("migrate says nothing of what it moved")
	}
}

// pausedKind reports whether counts shows kind paused.
func pausedKind(counts countsDocJSON, kind string) bool {
	for _, k := range counts.Kinds {
		if k.Kind == kind {
			return k.Paused
		}
	}
	return false
}
