package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkPick measures what the priority rule costs a claim: taking the
// next entry from the ready queues of 10 kinds holding 1,000 entries each,
// and putting it back, under each rule. No Redis call is made.
func BenchmarkPick(b *testing.B) {
	for _, rule := range []string{"due order", "weighted", "strict"} {
		b.Run(rule, func(b *testing.B) {
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialed
			defer rdb.Close()
			var opts []Option
			if rule == "strict" {
				opts = append(opts, WithStrictPriority())
			}
			n, err := New(rdb, opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer n.StopNow()
			for k := range 10 {
				var ho []HandleOption
				if rule != "due order" {
					ho = append(ho, WithKindPriority(k+1))
				}
				if err := n.Handle(fmt.Sprintf("kind-%d", k), func(context.Context, Task) error { return nil }, ho...); err != nil {
					b.Fatal(err)
				}
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			for k := range 10 {
				for i := range 1000 {
					n.readyLocked(&entry{id: fmt.Sprintf("%d-%d", k, i), kind: fmt.Sprintf("kind-%d", k), due: int64(i*10 + k), index: -1})
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				e := n.pickLocked()
				n.readyLocked(e)
			}
		})
	}
}
