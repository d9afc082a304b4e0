package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// TestClusterFailoverPromotesTheReplicaAndKeepsReplicatedWrites starts a
// cluster, writes a key that its replica acknowledged (WAIT), kills the
// key's master, and checks that the replica took over with the key, and
// that the killed master comes back as a replica.
func TestClusterFailoverPromotesTheReplicaAndKeepsReplicatedWrites(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{NodeTimeout: redistest.FailoverNodeTimeout})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if len(c.Servers) != 2*redistest.ClusterMasters {
		t.Fatalf("%d servers, want %d", len(c.Servers), 2*redistest.ClusterMasters)
	}
	const key = "{scheduler}:probe"
	master, err := c.MasterFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	mc := master.Client()
	defer mc.Close()
	if err := mc.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := mc.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d replicas acknowledged, err %v", n, err)
	}

	killed, err := c.KillMasterFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if killed != master {
		t.Fatalf("killed %s, want the key's master %s", killed.Addr, master.Addr)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	promoted, err := c.MasterFor(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if promoted == killed {
		t.Fatalf("the killed master %s still serves the key", killed.Addr)
	}
	cc := c.Client()
	defer cc.Close()
	if v, err := cc.Get(ctx, key).Result(); err != nil || v != "v" {
		t.Fatalf("after the failover: got %q, %v; want the replicated value", v, err)
	}

	if err := killed.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	kc := killed.Client()
	defer kc.Close()
	role, err := kc.Do(ctx, "ROLE").Slice()
	if err != nil {
		t.Fatal(err)
	}
	if role[0] != "slave" {
		t.Fatalf("the restarted server's role is %v, want a replica", role[0])
	}
}
