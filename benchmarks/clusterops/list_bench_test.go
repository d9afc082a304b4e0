// Package clusterops measures the cluster module's operations on a large
// store: listing a page of 100 tasks out of 1,000 and out of 1,000,000, by
// state and by kind among a thousand kinds, at the start of the listing and
// from a cursor in its middle; and the cost per task of the scripts a task
// goes through (schedule, claim, complete), which keep the run history and
// the per-kind indexes. Run it from the benchmarks folder (redis-server
// must be on PATH):
//
//	go test -run '^$' -bench . -benchtime 2000x ./clusterops/
package clusterops

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// The store's layout under the default prefix, as the cluster's schedule
// script writes it (a million Schedule calls would take minutes).
const (
	prefix = "{scheduler}"
	// target is the kind listed by kind: it holds targetTasks of the
	// tasks, the other kinds (otherKinds of them) share the rest.
	target      = "target"
	targetTasks = 1000
	otherKinds  = 999
)

// fill stores n pending tasks the way the schedule script does: a hash per
// task, its due time in the pending set and in its kind's pending index,
// its kind in the set of kinds. The first targetTasks of them (or all, if
// fewer) are of kind target, the rest spread over otherKinds kinds. Every
// tenth task shares its due time with the one before, so the pages cross
// ties. The writes are pipelined in batches.
func fill(b *testing.B, c *redis.Client, n int) {
	b.Helper()
	ctx := context.Background()
	base := time.Now().Add(24 * time.Hour).UnixMicro()
	const batch = 10000
	for start := 0; start < n; start += batch {
		pipe := c.Pipeline()
		for i := start; i < min(start+batch, n); i++ {
			id := fmt.Sprintf("task-%07d", i)
			kind := target
			if i >= targetTasks {
				kind = "kind-" + strconv.Itoa(i%otherKinds)
			}
			due := base + int64(i-i%10/9)*1000
			pipe.HSet(ctx, prefix+":t:"+id, "kind", kind, "payload", "p", "due", strconv.FormatInt(due, 10),
				"max", "3", "attempt", "0", "lost", "0", "sum", "x", "fixed", "1")
			z := redis.Z{Score: float64(due), Member: id}
			pipe.ZAdd(ctx, prefix+":pending", z)
			pipe.ZAdd(ctx, prefix+":k:pending:"+kind, z)
			pipe.SAdd(ctx, prefix+":kinds", kind)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// middleCursor pages through half of the listing q selects, with pages of
// a tenth of it (at most MaxPage), and returns the cursor reached.
func middleCursor(b *testing.B, node *cluster.Node, q cluster.ListQuery, total int) string {
	b.Helper()
	q.Limit = min(cluster.MaxPage, max(total/10, 1))
	for seen := 0; seen < total/2; {
		p, err := node.List(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		seen += len(p.Tasks)
		q.Cursor = p.Next
	}
	return q.Cursor
}

func BenchmarkListPage100(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		b.Run("tasks="+strconv.Itoa(n), func(b *testing.B) {
			c := startRedis(b)
			fill(b, c, n)
			node, err := cluster.New(c)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for _, by := range []struct {
				name  string
				q     cluster.ListQuery
				total int
			}{
				{"state", cluster.ListQuery{State: cluster.Pending}, n},
				{"kind", cluster.ListQuery{State: cluster.Pending, Kind: target}, min(n, targetTasks)},
			} {
				middle := middleCursor(b, node, by.q, by.total)
				for _, at := range []struct{ name, cursor string }{{"first", ""}, {"middle", middle}} {
					b.Run("by="+by.name+"/"+at.name, func(b *testing.B) {
						q := by.q
						q.Cursor, q.Limit = at.cursor, 100
						for b.Loop() {
							p, err := node.List(ctx, q)
							if err != nil || len(p.Tasks) != 100 {
								b.Fatalf("%d tasks, %v", len(p.Tasks), err)
							}
						}
					})
				}
			}
			b.Run("counts", func(b *testing.B) {
				for b.Loop() {
					if _, err := node.Counts(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			kinds := 1
			if n > targetTasks {
				kinds += otherKinds
			}
			b.Run("countsByKind", func(b *testing.B) {
				for b.Loop() {
					if _, got, err := node.CountsByKind(ctx); err != nil || len(got) != kinds {
						b.Fatalf("%d kinds, %v", len(got), err)
					}
				}
			})
		})
	}
}
