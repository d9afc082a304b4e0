package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The layout check a node makes at Start: it writes the layout record of
// a new keyspace, and refuses an old single-slot keyspace, another number
// of partitions and an unknown layout version.

// testKeyspace is the keyspace of a prefix with a number of partitions,
// for the tests that read Redis directly.
type testKeyspace struct {
	rdb    redis.UniversalClient
	prefix string
	parts  []redisdriver.Partition
}

// keyspaceOf is the keyspace of prefix with n partitions.
func keyspaceOf(rdb redis.UniversalClient, prefix string, n int) testKeyspace {
	return testKeyspace{rdb: rdb, prefix: prefix, parts: redisdriver.PartitionsOf(prefix, n)}
}

// partOf is the partition of task id.
func (k testKeyspace) partOf(id string) redisdriver.Partition {
	return k.parts[driver.PartitionOf(id, len(k.parts))]
}

// checkLayout is the check of Node.Start, worded as Start words it.
func (k testKeyspace) checkLayout(ctx context.Context) error {
	drv := redisdriver.New(k.rdb, redisdriver.Options{Prefix: k.prefix, Partitions: len(k.parts)})
	return checkedLayout(drv.CheckLayout(ctx), k.prefix, len(k.parts))
}

func TestCheckLayoutWritesTheRecordOfANewKeyspace(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	if n, err := RecordedPartitions(ctx, rdb, "{lay}"); n != 0 || err != nil {
		t.Fatalf("RecordedPartitions of an empty keyspace: %d, %v", n, err)
	}
	st := keyspaceOf(rdb, "{lay}", 12)
	for range 2 {
		if err := st.checkLayout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rec := rdb.HGetAll(ctx, "{lay}:layout").Val()
	if rec["version"] != "2" || rec["partitions"] != "12" || len(rec) != 2 {
		t.Fatalf("layout record %v", rec)
	}
	if n, err := RecordedPartitions(ctx, rdb, "{lay}"); n != 12 || err != nil {
		t.Fatalf("RecordedPartitions: %d, %v", n, err)
	}
}

func TestCheckLayoutRefusesAnOldKeyspace(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	o := redisdriver.OldLayout{Prefix: "{lay}"}
	for _, seed := range []struct {
		name  string
		write func()
	}{
		{"a pending task", func() { rdb.ZAdd(ctx, o.StateSet(string(Pending)), redis.Z{Score: 1, Member: "a"}) }},
		{"a running task", func() { rdb.ZAdd(ctx, o.StateSet(string(Running)), redis.Z{Score: 1, Member: "a"}) }},
		{"a dead task", func() { rdb.ZAdd(ctx, o.StateSet(string(Dead)), redis.Z{Score: 1, Member: "a"}) }},
		{"a done record", func() { rdb.ZAdd(ctx, o.StateSet(string(Done)), redis.Z{Score: 1, Member: "a"}) }},
		{"a paused kind's pending task", func() {
			rdb.SAdd(ctx, o.Paused(), "report")
			rdb.ZAdd(ctx, o.KindIndex(string(Pending), "report"), redis.Z{Score: 1, Member: "a"})
		}},
	} {
		t.Run(seed.name, func(t *testing.T) {
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			rdb.HSet(ctx, o.Task("a"), "kind", "report")
			seed.write()
			err := keyspaceOf(rdb, "{lay}", 8).checkLayout(ctx)
			if !errors.Is(err, ErrLayout) {
				t.Fatalf("checkLayout of an old keyspace: %v", err)
			}
			for _, want := range []string{"stpectl migrate", "cluster.Migrate", "docs/cluster-upgrade.md", `"{lay}"`} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("the error %q does not say %q", err, want)
				}
			}
			if rdb.Exists(ctx, "{lay}:layout").Val() != 0 {
				t.Fatal("the refused check wrote the layout record")
			}
		})
	}
}

// A node of an earlier version left running after the migration writes
// into the old layout again: a node of this version refuses to start and
// says so, rather than leave those tasks unseen.
func TestCheckLayoutRefusesAMigratedKeyspaceAnOldNodeWritesInto(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	st := keyspaceOf(rdb, "{lay}", 8)
	if err := st.checkLayout(ctx); err != nil {
		t.Fatal(err)
	}
	o := redisdriver.OldLayout{Prefix: "{lay}"}
	rdb.HSet(ctx, o.Task("late"), "kind", "report")
	rdb.ZAdd(ctx, o.StateSet(string(Pending)), redis.Z{Score: 1, Member: "late"})
	err := st.checkLayout(ctx)
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "earlier version still runs") ||
		!strings.Contains(err.Error(), "stpectl migrate") {
		t.Fatalf("checkLayout of a migrated keyspace with old tasks again: %v", err)
	}
}

func TestCheckLayoutRefusesAnotherNumberOfPartitions(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	if err := keyspaceOf(rdb, "{lay}", 64).checkLayout(ctx); err != nil {
		t.Fatal(err)
	}
	err := keyspaceOf(rdb, "{lay}", 16).checkLayout(ctx)
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "64 partitions") || !strings.Contains(err.Error(), "has 16") {
		t.Fatalf("checkLayout with 16 partitions of a keyspace of 64: %v", err)
	}
	if n, _ := RecordedPartitions(ctx, rdb, "{lay}"); n != 64 {
		t.Fatalf("the record changed to %d partitions", n)
	}
}

func TestCheckLayoutRefusesAnUnknownVersion(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	rdb.HSet(ctx, "{lay}:layout", "version", "3", "partitions", "64")
	err := keyspaceOf(rdb, "{lay}", 64).checkLayout(ctx)
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), `"3"`) {
		t.Fatalf("checkLayout of a layout version 3: %v", err)
	}
	if _, err := RecordedPartitions(ctx, rdb, "{lay}"); !errors.Is(err, ErrLayout) {
		t.Fatalf("RecordedPartitions of a layout version 3: %v", err)
	}
	rdb.HSet(ctx, "{lay}:layout", "version", "2", "partitions", "many")
	if _, err := RecordedPartitions(ctx, rdb, "{lay}"); !errors.Is(err, ErrLayout) {
		t.Fatalf("RecordedPartitions of %q partitions: %v", "many", err)
	}
}

func TestCheckLayoutReturnsRedisErrorsWrapped(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	rdb.Set(ctx, "{lay}:layout", "not a hash", 0)
	err := keyspaceOf(rdb, "{lay}", 4).checkLayout(ctx)
	if err == nil || errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("checkLayout on a layout key of the wrong type: %v", err)
	}
}

func TestCheckLayoutOnARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	rdb := c.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	o := redisdriver.OldLayout{Prefix: "{layc}"}
	rdb.SAdd(ctx, o.Kinds(), "mail")
	rdb.ZAdd(ctx, o.KindIndex(string(Pending), "mail"), redis.Z{Score: 1, Member: "a"})
	if err := keyspaceOf(rdb, "{layc}", 8).checkLayout(ctx); !errors.Is(err, ErrLayout) {
		t.Fatalf("checkLayout of an old keyspace on a cluster: %v", err)
	}
	if err := keyspaceOf(rdb, "{new}", 8).checkLayout(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := RecordedPartitions(ctx, rdb, "{new}"); n != 8 || err != nil {
		t.Fatalf("RecordedPartitions: %d, %v", n, err)
	}
}
