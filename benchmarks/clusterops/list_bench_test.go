// Package clusterops measures the cluster module's operations on a large
// store: listing a page of 100 tasks out of 1,000 and out of 1,000,000, by
// state and by kind among a thousand kinds, at the start of the listing and
// from a cursor in its middle, over the store's partitions; reading one
// task and moving it (Get, Reschedule); and the cost per task of the
// scripts a task goes through (schedule, claim, complete), which keep the
// run history and the per-kind indexes. Run it from the benchmarks folder (redis-server
// must be on PATH):
//
//	go test -run '^$' -bench . -benchtime 2000x ./clusterops/
package clusterops

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

const (
	// target is the kind listed by kind: it holds targetTasks of the
	// tasks, the other kinds (otherKinds of them) share the rest.
	target      = "target"
	targetTasks = 1000
	otherKinds  = 999
	// fillers is how many goroutines store the tasks at once.
	fillers = 64
)

// taskID is the ID of the i-th task fill stores.
func taskID(i int) string { return fmt.Sprintf("task-%07d", i) }

// fill stores n pending tasks through node.Schedule (so they land in the
// partitions as the cluster lays them out), fillers at a time. The first
// targetTasks of them (or all, if fewer) are of kind target, the rest
// spread over otherKinds kinds. Every tenth task shares its due time with
// the one before, so the pages cross ties.
func fill(b *testing.B, node *cluster.Node, n int) {
	b.Helper()
	ctx := context.Background()
	base := time.Now().Add(24 * time.Hour)
	next := make(chan int)
	errs := make(chan error, fillers)
	var wg sync.WaitGroup
	for range fillers {
		wg.Go(func() {
			for i := range next {
				kind := target
				if i >= targetTasks {
					kind = "kind-" + strconv.Itoa(i%otherKinds)
				}
				due := base.Add(time.Duration(i-i%10/9) * time.Millisecond)
				if _, err := node.Schedule(ctx, kind, []byte("p"), due, cluster.WithID(taskID(i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := 0; i < n && len(errs) == 0; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
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
			node, err := cluster.New(c)
			if err != nil {
				b.Fatal(err)
			}
			fill(b, node, n)
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
			// The actions on one task among n: each finds the task's
			// partition and runs one script there (two when it must
			// learn the task's kind first).
			b.Run("get", func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, ok, err := node.Get(ctx, taskID(i%n)); err != nil || !ok {
						b.Fatalf("get: %v, %v", ok, err)
					}
					i++
				}
			})
			b.Run("reschedule", func(b *testing.B) {
				i := 0
				due := time.Now().Add(48 * time.Hour)
				for b.Loop() {
					if err := node.Reschedule(ctx, taskID(i%n), due); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
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
