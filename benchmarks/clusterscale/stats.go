package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What Redis counts: a snapshot of every master's INFO commandstats (calls
// per command and their time, those a Lua script makes included), INFO
// stats (total_net_output_bytes: what it sent to clients and, Redis 7.0
// counts it there too, to its replicas; the cluster bus is not in it) and
// INFO cpu; and how many subscribers the store's event channels have.

// measureCommands are left out of the counts: those this command itself
// sends to read the statistics or check the cluster, and the replicas'
// acknowledgements of the replication stream (REPLCONF), which no task
// causes. A cluster client's own CLUSTER SLOTS reads are left out too,
// being indistinguishable from this command's.
var measureCommands = map[string]bool{"info": true, "pubsub|numsub": true, "pubsub|channels": true,
	"pubsub|shardnumsub": true, "pubsub|shardchannels": true, "ping": true, "dbsize": true, "flushall": true,
	"cluster|keyslot": true, "cluster|info": true, "cluster|slots": true, "cluster|shards": true,
	"cluster|nodes": true, "cluster|countkeysinslot": true, "replconf": true}

// snapshot is the statistics summed over the masters at one moment.
type snapshot struct {
	calls    map[string]int64 // by command
	usec     map[string]int64 // by command: Redis's time executing it
	outBytes int64
	cpu      float64 // seconds of CPU the servers used (INFO cpu, user + system)
}

// take reads the statistics of every client in ms.
func take(ctx context.Context, ms []*redis.Client) (snapshot, error) {
	s := snapshot{calls: map[string]int64{}, usec: map[string]int64{}}
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
			n, rest, _ := strings.Cut(rest, ",")
			k, _ := strconv.ParseInt(n, 10, 64)
			name = strings.TrimPrefix(name, "cmdstat_")
			s.calls[name] += k
			if u, ok := strings.CutPrefix(rest, "usec="); ok {
				u, _, _ = strings.Cut(u, ",")
				us, _ := strconv.ParseInt(u, 10, 64)
				s.usec[name] += us
			}
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
		cpu, err := c.Info(ctx, "cpu").Result()
		if err != nil {
			return s, err
		}
		for _, field := range []string{"used_cpu_user", "used_cpu_sys"} {
			v, _ := strconv.ParseFloat(infoField(cpu, field), 64)
			s.cpu += v
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
	usec      int64   // Redis's time executing the commands (those inside scripts are counted in the script's)
	cpu       float64 // seconds of the servers' CPU, networking and cluster bus included
	byCommand map[string]int64
}

func diff(a, b snapshot) delta {
	d := delta{outBytes: b.outBytes - a.outBytes, cpu: b.cpu - a.cpu, byCommand: map[string]int64{}}
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
			d.usec += b.usec[name] - a.usec[name]
		case "publish", "spublish":
			d.publishes += k
		}
		if !inScripts(name) {
			d.usec += b.usec[name] - a.usec[name]
		}
	}
	return d
}

// inScripts reports whether a command's time is already in its script's:
// the commands the store's scripts call. Those sent alone too (ZRANGE of a
// listing, for example) are counted in the script's time either way, a
// small undercount of the total.
func inScripts(name string) bool {
	switch name {
	case "evalsha", "eval":
		return true
	}
	return scriptCommands[name]
}

// scriptCommands are the commands the store's scripts call; Redis counts
// a script's time under EVALSHA and again under each command it calls.
var scriptCommands = map[string]bool{"zadd": true, "zrem": true, "zscore": true, "zrangebyscore": true, "zrange": true,
	"zcard": true, "zcount": true, "hset": true, "hget": true, "hmget": true, "hgetall": true, "hdel": true, "hincrby": true,
	"del": true, "get": true, "set": true, "exists": true, "sadd": true, "srem": true, "sismember": true, "smembers": true,
	"publish": true, "spublish": true, "time": true, "expire": true, "pexpire": true, "incr": true, "scard": true}

// channelSubscribers returns, for each pub/sub channel whose name holds
// "events" (the store's) or starts with "asynq", how many subscribers it has over every
// server: plain channels (PUBLISH reaches every server of a cluster, each
// delivering to its own subscribers) and shard channels (SPUBLISH).
func channelSubscribers(ctx context.Context, admin []*redis.Client) (map[string]int64, error) {
	subs := map[string]int64{}
	for _, c := range admin {
		for _, shard := range []bool{false, true} {
			var names []string
			var err error
			if shard {
				names, err = c.PubSubShardChannels(ctx, "*events*").Result()
			} else {
				names, err = c.PubSubChannels(ctx, "*events*").Result()
			}
			if err != nil {
				return nil, err
			}
			if len(names) == 0 {
				continue
			}
			var counts map[string]int64
			if shard {
				counts, err = c.PubSubShardNumSub(ctx, names...).Result()
			} else {
				counts, err = c.PubSubNumSub(ctx, names...).Result()
			}
			if err != nil {
				return nil, err
			}
			for ch, k := range counts {
				subs[ch] += k
			}
		}
	}
	return subs, nil
}

// meanSubscribers is the mean number of subscribers per channel: what each
// message published reaches when the messages fall evenly on the channels
// (the store's partitions take the tasks by a hash of their random IDs).
func meanSubscribers(subs map[string]int64) float64 {
	var total int64
	for _, k := range subs {
		total += k
	}
	if len(subs) == 0 {
		return 0
	}
	return float64(total) / float64(len(subs))
}

// infoField returns the value of field in INFO-style text ("field:value"
// lines), or "?" if there is none.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
