package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// seedOldLayout writes, under the fixture's prefix, the keys an earlier
// version wrote in its single-slot layout: a pending task of mail, a
// pending task of the paused kind report, a dead task, and a done marker.
func (f *fixture) seedOldLayout() {
	f.t.Helper()
	ctx := context.Background()
	p := f.prefix
	pipe := f.rdb.Pipeline()
	for _, t := range []struct{ id, kind, state string }{{"a", "mail", "pending"}, {"b", "report", "pending"}, {"c", "mail", "dead"}} {
		pipe.HSet(ctx, p+":t:"+t.id, "kind", t.kind, "payload", "x", "due", "1", "max", "3", "attempt", "0", "lost", "0")
		if t.kind != "report" {
			pipe.ZAdd(ctx, p+":"+t.state, redis.Z{Score: 1, Member: t.id})
		}
		pipe.ZAdd(ctx, p+":k:"+t.state+":"+t.kind, redis.Z{Score: 1, Member: t.id})
		pipe.SAdd(ctx, p+":kinds", t.kind)
	}
	pipe.SAdd(ctx, p+":paused", "report")
	pipe.Set(ctx, p+":done:gone", "sum", time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		f.t.Fatal(err)
	}
}

func TestMigrateMovesTheOldLayoutAndPrintsTheReport(t *testing.T) {
	f := newFixture(t)
	f.seedOldLayout()
	var doc migrateJSON
	f.ctlJSON(0, &doc, "migrate", "-partitions", "8")
	if doc.Partitions != 8 || doc.Pending != 2 || doc.Dead != 1 || doc.Running != 0 || doc.Done != 0 ||
		doc.Markers != 1 || len(doc.PausedKinds) != 1 || doc.PausedKinds[0] != "report" {
		t.Fatalf("migrate: %+v", doc)
	}
	ctx := context.Background()
	if n, err := cluster.RecordedPartitions(ctx, f.rdb, f.prefix); n != 8 || err != nil {
		t.Fatalf("recorded partitions %d, %v", n, err)
	}
	for _, key := range []string{":pending", ":dead", ":kinds", ":paused", ":t:a", ":t:b", ":t:c", ":done:gone"} {
		if f.rdb.Exists(ctx, f.prefix+key).Val() != 0 {
			t.Fatalf("%s%s left after the migration", f.prefix, key)
		}
	}
	// Again, in text, with the recorded number: nothing left to move.
	r := f.ctl("migrate")
	wantOK(t, r)
	if !strings.HasPrefix(r.stdout, "moved 0 task(s) into 8 partitions in ") {
		t.Fatalf("stdout %q", r.stdout)
	}
	wantExit(t, f.ctl("migrate", "-partitions", "16"), 1, "recorded with 8 partitions")
}

func TestMigrateRefusesWhileNodesAreLiveUnlessForced(t *testing.T) {
	f := newFixture(t)
	f.seedOldLayout()
	ctx := context.Background()
	f.rdb.ZAdd(ctx, f.prefix+":nodes", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMicro()), Member: "old-node"})
	wantExit(t, f.ctl("migrate"), 1, "old-node", "stop every node first")
	if f.rdb.Exists(ctx, f.prefix+":t:a").Val() != 1 {
		t.Fatal("the refused migration moved a task")
	}
	r := f.ctl("migrate", "-force")
	wantOK(t, r)
	for _, want := range []string{"moved 3 task(s) into 64 partitions", "2 pending", "1 dead", "1 done marker(s)", "paused in every partition: report"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestMigrateBadPartitionsIsAUsageError(t *testing.T) {
	f := newFixture(t)
	wantExit(t, f.ctl("migrate", "-partitions", "-3"), 2, "partitions -3", "Usage: stpectl migrate")
}
