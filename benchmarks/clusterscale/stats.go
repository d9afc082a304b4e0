package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What Redis counts: a snapshot of every master's INFO commandstats (calls
// per command, those a Lua script makes included) and INFO stats
// (total_net_output_bytes: what it sent to clients, replication not
// included), and how many subscribers the store's channel has.

// measureCommands are left out of the counts: those this command itself
// sends to read the statistics or check the cluster, and the replicas'
// acknowledgements of the replication stream (REPLCONF), which no task
// causes. A cluster client's own CLUSTER SLOTS reads are left out too,
// being indistinguishable from this command's.
var measureCommands = map[string]bool{"info": true, "pubsub|numsub": true, "ping": true, "dbsize": true, "cluster|keyslot": true, "cluster|info": true, "cluster|slots": true, "replconf": true}

// snapshot is the statistics summed over the masters at one moment.
type snapshot struct {
	calls    map[string]int64 // by command
	outBytes int64
}

// take reads the statistics of every client in ms.
func take(ctx context.Context, ms []*redis.Client) (snapshot, error) {
	s := snapshot{calls: map[string]int64{}}
	for _, c := range ms {
		cmds, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			return s, err
		}
		for _, line := range strings.Split(cmds, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
			if !ok {
				continue
			}
			n, _, _ := strings.Cut(rest, ",")
			k, _ := strconv.ParseInt(n, 10, 64)
			s.calls[strings.TrimPrefix(name, "cmdstat_")] += k
		}
		stats, err := c.Info(ctx, "stats").Result()
		if err != nil {
			return s, err
		}
		for _, line := range strings.Split(stats, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_net_output_bytes:"); ok {
				k, _ := strconv.ParseInt(v, 10, 64)
				s.outBytes += k
			}
		}
	}
	return s, nil
}

// delta is what happened between two snapshots.
type delta struct {
	commands  int64 // every command, those inside scripts included
	evalsha   int64 // script round trips (EVALSHA and EVAL)
	publishes int64
	outBytes  int64
	byCommand map[string]int64
}

func diff(a, b snapshot) delta {
	d := delta{outBytes: b.outBytes - a.outBytes, byCommand: map[string]int64{}}
	for name, k := range b.calls {
		k -= a.calls[name]
		if k == 0 || measureCommands[name] {
			continue
		}
		d.byCommand[name] = k
		d.commands += k
		switch name {
		case "evalsha", "eval":
			d.evalsha += k
		case "publish":
			d.publishes += k
		}
	}
	return d
}

// subscribers counts the subscribers of channel over every server (in a
// Redis Cluster a PUBLISH reaches every server, and each delivers it to
// its own subscribers).
func subscribers(ctx context.Context, admin []*redis.Client, channel string) (int64, error) {
	var total int64
	for _, c := range admin {
		m, err := c.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			return 0, err
		}
		total += m[channel]
	}
	return total, nil
}
