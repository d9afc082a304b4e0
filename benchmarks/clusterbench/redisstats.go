package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What redis-server counts, read before and after a pass: INFO
// commandstats (calls and time per command, those a Lua script calls
// included) and INFO stats (bytes received from and sent to clients).

// redisCounts is one reading of the server's counters.
type redisCounts struct {
	calls  map[string]int64 // by command
	usec   map[string]int64 // by command: Redis's time executing it (a script's holds the commands it calls)
	netIn  int64            // bytes read from clients
	netOut int64            // bytes written to clients
}

// ownCommands are the commands this benchmark sends to read and reset
// the counters, left out of the counts.
var ownCommands = map[string]bool{"info": true, "flushall": true, "ping": true, "config|resetstat": true}

// readCounts reads the counters of the server behind rdb.
func readCounts(ctx context.Context, rdb *redis.Client) (redisCounts, error) {
	c := redisCounts{calls: map[string]int64{}, usec: map[string]int64{}}
	info, err := rdb.Info(ctx, "commandstats", "stats").Result()
	if err != nil {
		return c, err
	}
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "total_net_input_bytes:"); ok {
			c.netIn, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "total_net_output_bytes:"); ok {
			c.netOut, _ = strconv.ParseInt(v, 10, 64)
		}
		name, rest, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		n, rest, _ := strings.Cut(rest, ",")
		c.calls[name], _ = strconv.ParseInt(n, 10, 64)
		if u, ok := strings.CutPrefix(rest, "usec="); ok {
			u, _, _ = strings.Cut(u, ",")
			c.usec[name], _ = strconv.ParseInt(u, 10, 64)
		}
	}
	return c, nil
}

// countsDelta is what the server did between two readings.
type countsDelta struct {
	commands      int64            // every command, those inside scripts included
	scripts       int64            // EVALSHA and EVAL calls
	byCommand     map[string]int64 // calls by command
	usecByCommand map[string]int64
	netIn, netOut int64
}

func (a redisCounts) to(b redisCounts) countsDelta {
	d := countsDelta{byCommand: map[string]int64{}, usecByCommand: map[string]int64{}, netIn: b.netIn - a.netIn, netOut: b.netOut - a.netOut}
	for name, k := range b.calls {
		k -= a.calls[name]
		if k == 0 || ownCommands[name] {
			continue
		}
		d.byCommand[name] = k
		d.usecByCommand[name] = b.usec[name] - a.usec[name]
		d.commands += k
		if name == "evalsha" || name == "eval" {
			d.scripts += k
		}
	}
	return d
}
