package redisdriver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Reading the per-minute timeline: each partition has a hash per minute
// (Partition.Timeline) whose fields are "<kind>|<name>": "f" failed runs,
// "l" lost runs, "p" pending tasks sampled, "o" the oldest overdue one
// (µs), and a lateness bucket's number for the runs that ended in it.

// maxLateBuckets bounds the lateness bucket numbers read: a field past it
// is not one the scripts write.
const maxLateBuckets = 1024

// ReadTimeline reads the hashes of every minute of every partition in one
// pipeline.
func (d *Driver) ReadTimeline(ctx context.Context, kind string, first, last int64) ([]driver.MinuteCounts, error) {
	if first > last {
		return nil, nil
	}
	pipe := d.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, 0, int(last-first+1)*len(d.parts))
	for m := first; m <= last; m++ {
		for _, p := range d.parts {
			cmds = append(cmds, pipe.HGetAll(ctx, p.Timeline(m)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]driver.MinuteCounts, 0, last-first+1)
	for i, m := 0, first; m <= last; m++ {
		c := driver.MinuteCounts{Minute: m}
		for range d.parts {
			addMinute(&c, cmds[i].Val(), kind)
			i++
		}
		out = append(out, c)
	}
	return out, nil
}

// addMinute adds the fields of one partition's minute hash, of kind (""
// for every kind), to c. A field it cannot read is left out.
func addMinute(c *driver.MinuteCounts, fields map[string]string, kind string) {
	for f, v := range fields {
		cut := strings.LastIndexByte(f, '|')
		if cut < 0 || (kind != "" && f[:cut] != kind) {
			continue
		}
		num, err := strconv.ParseInt(v, 10, 64)
		if err != nil || num < 0 {
			continue
		}
		switch name := f[cut+1:]; name {
		case "f":
			c.Failed += int(num)
		case "l":
			c.Lost += int(num)
		case "p":
			c.Pending += int(num)
		case "o":
			c.Oldest = max(c.Oldest, time.Duration(num)*time.Microsecond)
		default:
			if b, err := strconv.Atoi(name); err == nil && b >= 0 && b < maxLateBuckets {
				if b >= len(c.Late) {
					c.Late = append(c.Late, make([]uint64, b+1-len(c.Late))...)
				}
				c.Late[b] += uint64(num)
			}
		}
	}
}
