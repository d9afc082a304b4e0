package redisdriver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkScheduleManyScripts compares the two ways ScheduleMany could
// store a batch of 1,000 tasks, both in one pipeline: one schedule script
// per task (ScheduleScript, as Driver.Schedule runs it, and as it was before a
// random ID was no longer looked up), or one script per
// partition's share of the batch (ScheduleManyScript, up to the given
// number of tasks per script), which Driver.ScheduleMany runs. Besides the time
// per task it reports what Redis did per task, from INFO commandstats:
// the commands it ran (scripts and the commands inside them) and its time
// executing the scripts (a script's time holds the commands it calls),
// and the CPU time of redis-server (INFO cpu: reading, parsing and
// answering the commands too; the machine's other load shows in it).
func BenchmarkScheduleManyScripts(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	rdb := srv.Client()
	defer rdb.Close()
	ctx := context.Background()
	const batch = 1000
	for _, mode := range []struct {
		name    string
		perTask *redis.Script
		chunk   int
	}{
		{"one script per task, random IDs looked up (before)", scheduleScriptBefore, 0},
		{"one script per task", ScheduleScript, 0},
		{"one script per partition, up to 64 tasks", nil, 64},
		{"one script per partition, up to 256 tasks", nil, 256},
	} {
		b.Run(mode.name, func(b *testing.B) {
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			d := New(rdb, Options{Prefix: "{scheduler}", Partitions: 64})
			due := time.Now().Add(time.Hour)
			tasks := make([]driver.NewTask, batch)
			before := commandStats(b, rdb)
			b.ResetTimer()
			for b.Loop() {
				for i := range tasks {
					tasks[i] = driver.NewTask{ID: randomHex(), Kind: "k", Payload: []byte("payload"), Due: due, MaxRetries: 25}
				}
				var calls []scriptCall
				sc := ScheduleManyScript
				if mode.perTask != nil {
					sc = mode.perTask
					for _, t := range tasks {
						p := d.partOf(t.ID)
						calls = append(calls, scriptCall{keys: p.TaskKeys(t.Kind, t.ID),
							args: []any{t.ID, t.Kind, t.Payload, strconv.FormatInt(t.Due.UnixMicro(), 10), t.MaxRetries, "0", p.Channel(), ""}})
					}
				} else {
					byPart := make([][]int, len(d.parts))
					for i, t := range tasks {
						pi := d.partOf(t.ID).Index
						byPart[pi] = append(byPart[pi], i)
					}
					for pi, idx := range byPart {
						for len(idx) > 0 {
							k := min(len(idx), mode.chunk)
							calls = append(calls, storeBatch{part: d.parts[pi], tasks: idx[:k]}.call(tasks))
							idx = idx[k:]
						}
					}
				}
				cmds, err := evalEach(ctx, rdb, sc, calls)
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range cmds {
					if c.Err() != nil {
						b.Fatal(c.Err())
					}
				}
			}
			b.StopTimer()
			after := commandStats(b, rdb)
			tasksDone := float64(b.N * batch)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/tasksDone, "ns/task")
			b.ReportMetric(float64(after.calls-before.calls)/tasksDone, "redis-cmds/task")
			b.ReportMetric(float64(after.scriptUsec-before.scriptUsec)/tasksDone, "script-µs/task")
			b.ReportMetric((after.cpu-before.cpu)*1e6/tasksDone, "redis-cpu-µs/task")
		})
	}
}

// randomHex is 32 random hex digits, as the random IDs of package cluster.
func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// scheduleScriptBefore is ScheduleScript as it was before a random ID was
// no longer looked up: it reads the done marker and the hash of every
// task, and sets the metadata with a second HSET.
var scheduleScriptBefore = redis.NewScript(Source("lib/publish.lua", "lib/part.lua") + `
local sum = redis.sha1hex(ARGV[2] .. '\0' .. ARGV[4] .. '\0' .. ARGV[3])
local d = redis.call('GET', MARK)
if d then
  if d == sum then return 'done' end
  return 'conflict'
end
local f = redis.call('HMGET', TASK, 'sum', 'fin', 'kind')
if f[1] then
  if not f[2] then
    if f[1] == sum then return 'exists' end
    return 'conflict'
  end
  if f[3] ~= ARGV[2] then return 'conflict' end
  index_rem(INDEX, 'done', ARGV[1])
  redis.call('DEL', TASK)
end
redis.call('HSET', TASK, 'kind', ARGV[2], 'payload', ARGV[3], 'due', ARGV[4],
  'max', ARGV[5], 'attempt', '0', 'lost', '0', 'sum', sum, 'fixed', ARGV[6])
if ARGV[8] ~= '' then redis.call('HSET', TASK, 'meta', ARGV[8]) end
make_pending(INDEX, ARGV[7], ARGV[2], ARGV[4], ARGV[1])
return 'created'
`)

// redisWork is the sum of INFO commandstats's calls over every command
// (but INFO and FLUSHALL), the time Redis spent executing EVALSHA,
// and redis-server's CPU time in seconds (INFO cpu, user and system).
type redisWork struct {
	calls, scriptUsec int64
	cpu               float64
}

func commandStats(b *testing.B, c *redis.Client) redisWork {
	b.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var w redisWork
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_info" || name == "cmdstat_flushall" {
			continue
		}
		var calls, usec int64
		if _, err := fmt.Sscanf(strings.ReplaceAll(rest, ",", " "), "%d usec=%d", &calls, &usec); err != nil {
			b.Fatalf("commandstats line %q: %v", line, err)
		}
		w.calls += calls
		if name == "cmdstat_evalsha" {
			w.scriptUsec += usec
		}
	}
	cpu, err := c.InfoMap(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
		f, _ := strconv.ParseFloat(cpu["CPU"][k], 64)
		w.cpu += f
	}
	return w
}
