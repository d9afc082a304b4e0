package cluster

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// writeLayouts writes the layout record of each prefix, as a node's
// Start does, and keys that only look like one.
func writeLayouts(t *testing.T, rdb redis.UniversalClient, prefixes ...string) {
	t.Helper()
	ctx := context.Background()
	for _, p := range prefixes {
		if err := keyspaceOf(rdb, p, 4).checkLayout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Keys of other applications whose names end in :layout.
	rdb.Set(ctx, "page:layout", "two columns", 0)
	rdb.HSet(ctx, "form:layout", "columns", "2")
}

func TestKeyspacesListsThePrefixesWithALayoutRecord(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	if got, err := Keyspaces(ctx, rdb); err != nil || len(got) != 0 {
		t.Fatalf("an empty Redis: %q, %v", got, err)
	}
	writeLayouts(t, rdb, "{scheduler}", "{b}", "app:{jobs}")
	got, err := Keyspaces(ctx, rdb)
	if want := []string{"app:{jobs}", "{b}", "{scheduler}"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("Keyspaces: %q, %v; want %q", got, err, want)
	}
}

func TestKeyspacesScansEveryMasterOfARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	rdb := c.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	prefixes := []string{"{a}", "{b}", "{c}", "{d}", "{e}", "{f}", "{g}", "{h}"}
	masters := map[string]bool{}
	for _, p := range prefixes {
		m, err := c.MasterFor(ctx, layoutKey(p))
		if err != nil {
			t.Fatal(err)
		}
		masters[m.Addr] = true
	}
	if len(masters) < 2 {
		t.Fatalf("the test's prefixes all sit on %v; pick others", masters)
	}
	writeLayouts(t, rdb, prefixes...)
	got, err := Keyspaces(ctx, rdb)
	if err != nil || !slices.Equal(got, prefixes) {
		t.Fatalf("Keyspaces: %q, %v; want %q (on %d masters)", got, err, prefixes, len(masters))
	}
}

func TestKeyspacesSaysWhatFailed(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	srv.Stop()
	_, err := Keyspaces(context.Background(), rdb)
	if err == nil || !strings.HasPrefix(err.Error(), "cluster: keyspaces: ") {
		t.Fatalf("Keyspaces with Redis down: %v", err)
	}
}
