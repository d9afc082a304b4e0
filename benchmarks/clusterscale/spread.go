package main

// The key spread: how the keys of the stored tasks and their memory spread
// over the Redis Cluster's masters.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// spreadResult is how the keys of the stored tasks spread over the masters.
type spreadResult struct {
	tasks   int
	masters []masterKeys
	memory  int64 // bytes of used_memory the tasks added, over the masters
}

// masterKeys is one master's part: its slot ranges, its key count and its
// used_memory_human.
type masterKeys struct {
	slots  string
	keys   int64
	memory string
}

// deviation is the largest distance of a master's key count from the
// mean, as a fraction of the mean.
func (s spreadResult) deviation() float64 {
	var total int64
	for _, m := range s.masters {
		total += m.keys
	}
	mean := float64(total) / float64(len(s.masters))
	worst := 0.0
	for _, m := range s.masters {
		worst = max(worst, abs(float64(m.keys)-mean)/mean)
	}
	return worst
}

// abs is the absolute value of x.
func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// keySpread stores count tasks due in an hour on the Redis Cluster and
// reads how many keys and how much memory each master holds.
func keySpread(d *deployment, count int) (spreadResult, error) {
	ctx := context.Background()
	s := spreadResult{tasks: count}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return s, err
	}
	p, stopProducer, err := producer(d)
	if err != nil {
		return s, err
	}
	defer stopProducer()
	empty, err := usedMemory(ctx, admin)
	if err != nil {
		return s, err
	}
	due := time.Now().Add(time.Hour)
	if err := storeAll(count, func(i int) error {
		_, err := p.Schedule(ctx, "k", payload(i), due)
		return err
	}); err != nil {
		return s, err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return s, err
	}
	for _, m := range ms {
		keys, err := m.DBSize(ctx).Result()
		if err != nil {
			return s, err
		}
		mem, err := m.Info(ctx, "memory").Result()
		if err != nil {
			return s, err
		}
		s.masters = append(s.masters, masterKeys{slots: ownSlots(ctx, m), keys: keys, memory: infoField(mem, "used_memory_human")})
	}
	sort.Slice(s.masters, func(i, j int) bool { return s.masters[i].slots < s.masters[j].slots })
	full, err := usedMemory(ctx, admin)
	s.memory = full - empty
	return s, err
}

// usedMemory is INFO memory's used_memory summed over the masters.
func usedMemory(ctx context.Context, admin []*redis.Client) (int64, error) {
	ms, err := masters(ctx, admin)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range ms {
		info, err := m.Info(ctx, "memory").Result()
		if err != nil {
			return 0, err
		}
		var k int64
		if _, err := fmt.Sscan(infoField(info, "used_memory"), &k); err != nil {
			return 0, fmt.Errorf("INFO memory of %s: used_memory: %w", m.Options().Addr, err)
		}
		total += k
	}
	return total, nil
}

// ownSlots returns the slot ranges m serves as master.
func ownSlots(ctx context.Context, m *redis.Client) string {
	slots, err := m.ClusterSlots(ctx).Result()
	if err != nil {
		return "?"
	}
	var own []string
	for _, r := range slots {
		if len(r.Nodes) > 0 && r.Nodes[0].Addr == m.Options().Addr {
			own = append(own, fmt.Sprintf("%05d-%05d", r.Start, r.End))
		}
	}
	sort.Strings(own)
	return strings.Join(own, ", ")
}
