package redisdriver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Inspecting the store: Get, Counts, CountsByKind and Ping, read-only but
// for the forgetting of kinds left with no task.

// errShortReply is the cause of the error of a script whose reply is
// shorter than the script writes.
var errShortReply = errors.New("short reply from Redis")

// Get reads task id in one script on its partition, which needs no kind
// index, and its NextRun from the pending set in the same step; a pending
// task of a paused kind, which waits in its kind's index only, costs a
// second read there.
func (d *Driver) Get(ctx context.Context, id string) (driver.TaskInfo, bool, error) {
	p := d.partOf(id)
	keys := []string{p.Pending(), p.Lease(), p.Dead(), p.DoneSet(), p.Paused(), p.Task(id)}
	vals, err := GetScript.Run(ctx, d.rdb, keys, id).StringSlice()
	if err != nil {
		return driver.TaskInfo{}, false, err
	}
	if len(vals) < 3 {
		return driver.TaskInfo{}, false, nil
	}
	f := make(map[string]string, (len(vals)-3)/2)
	for i := 3; i+1 < len(vals); i += 2 {
		f[vals[i]] = vals[i+1]
	}
	info := infoFromHash(id, driver.State(vals[0]), vals[1] == "1", f)
	next := vals[2]
	if info.State == driver.Pending && next == "" {
		score, err := d.rdb.ZScore(ctx, p.KindIndex(string(driver.Pending), info.Kind), id).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return driver.TaskInfo{}, false, err
		}
		if err == nil {
			next = strconv.FormatFloat(score, 'f', 0, 64)
		}
	}
	if info.State == driver.Pending && next != "" {
		if us, err := parseMicros(next); err == nil {
			info.NextRun = time.UnixMicro(us)
		}
	}
	return info, true, nil
}

// infoFromHash reads a task's hash, found in state.
func infoFromHash(id string, state driver.State, paused bool, f map[string]string) driver.TaskInfo {
	info := driver.TaskInfo{ID: id, Kind: f["kind"], Payload: []byte(f["payload"]), State: state, Paused: paused}
	due, _ := parseMicros(f["due"])
	info.Due = time.UnixMicro(due)
	info.Attempt, _ = strconv.Atoi(f["attempt"])
	info.Lost, _ = strconv.Atoi(f["lost"])
	info.MaxRetries, _ = strconv.Atoi(f["max"])
	info.LastError = f["err"]
	info.History = ParseHistory(f["hist"])
	if state == driver.Running && f["owner"] != "" {
		info.Owner = f["owner"]
		if us, err := parseMicros(f["start"]); err == nil {
			info.Started = time.UnixMicro(us)
		}
	}
	if state == driver.Done {
		if us, err := parseMicros(f["fin"]); err == nil {
			info.Finished = time.UnixMicro(us)
		}
	}
	return info
}

// infos reads the stored tasks ids, found in state, and the paused kinds
// of their partitions, in one round trip; a task removed meanwhile is left
// out.
func (d *Driver) infos(ctx context.Context, ids []string, state driver.State) (map[string]driver.TaskInfo, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := d.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	paused := map[int]*redis.StringStructMapCmd{}
	for i, id := range ids {
		p := d.partOf(id)
		cmds[i] = pipe.HGetAll(ctx, p.Task(id))
		if paused[p.Index] == nil {
			paused[p.Index] = pipe.SMembersMap(ctx, p.Paused())
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make(map[string]driver.TaskInfo, len(ids))
	for i, id := range ids {
		if f := cmds[i].Val(); len(f) > 0 {
			_, isPaused := paused[d.partOf(id).Index].Val()[f["kind"]]
			out[id] = infoFromHash(id, state, isPaused, f)
		}
	}
	return out, nil
}

// partCounts is what CountsScript found in one partition.
type partCounts struct {
	total driver.Counts
	kinds map[string]driver.KindCounts
}

// countParts runs CountsScript in every partition, in one round trip (two
// when a partition's paused kinds are not those given), for the kinds
// given for each partition (by index; nil for none) besides the paused
// ones.
func (d *Driver) countParts(ctx context.Context, kinds [][]string, paused [][]string) ([]partCounts, error) {
	if paused == nil {
		paused = make([][]string, len(d.parts))
	}
	replies, err := d.pausedCalls(ctx, CountsScript, d.parts, paused, func(p Partition, paused []string) scriptCall {
		names := union(paused, kinds[p.Index])
		keys := []string{p.Pending(), p.Lease(), p.Dead(), p.DoneSet(), p.Paused()}
		args := make([]any, len(names))
		for i, kind := range names {
			keys = append(keys, p.KindKeys(kind)...)
			args[i] = kind
		}
		return scriptCall{keys: keys, args: args}
	})
	if err != nil {
		return nil, err
	}
	out := make([]partCounts, len(d.parts))
	for i, r := range replies {
		vals, _ := r.([]any)
		nums := make([]int64, len(vals))
		for j, v := range vals {
			nums[j], _ = v.(int64)
		}
		if len(nums) < 4 || (len(nums)-4)%5 != 0 {
			return nil, fmt.Errorf("%w: %d values", errShortReply, len(nums))
		}
		pc := partCounts{total: driver.Counts{Pending: nums[0], Running: nums[1], Dead: nums[2], Done: nums[3]},
			kinds: map[string]driver.KindCounts{}}
		// The kinds come back in the order they were given: rebuild it.
		names := union(paused[i], kinds[i])
		if len(names) != (len(nums)-4)/5 {
			return nil, fmt.Errorf("%w: %d values for %d kinds", errShortReply, len(nums), len(names))
		}
		for j, kind := range names {
			c := nums[4+5*j:]
			pc.kinds[kind] = driver.KindCounts{Kind: kind, Counts: driver.Counts{Pending: c[0], Running: c[1], Dead: c[2], Done: c[3]},
				Paused: c[4] == 1}
		}
		out[i] = pc
	}
	return out, nil
}

// union is a followed by the kinds of b not in a.
func union(a, b []string) []string {
	seen := make(map[string]bool, len(a)+len(b))
	out := make([]string, 0, len(a)+len(b))
	for _, list := range [][]string{a, b} {
		for _, kind := range list {
			if !seen[kind] {
				seen[kind] = true
				out = append(out, kind)
			}
		}
	}
	return out
}

// Counts counts every partition at one instant, all of them in one round
// trip: O(P) in Redis for P partitions, plus one step per partition and
// paused kind.
func (d *Driver) Counts(ctx context.Context) (driver.Counts, error) {
	parts, err := d.countParts(ctx, make([][]string, len(d.parts)), nil)
	if err != nil {
		return driver.Counts{}, err
	}
	var total driver.Counts
	for _, pc := range parts {
		total = total.Plus(pc.total)
	}
	return total, nil
}

// CountsByKind reads the kinds of every partition in one round trip, then
// counts each partition at one instant, all of them in a second round
// trip of one script per partition that makes O(kinds) steps; the kinds
// read first may miss one stored in between, whose tasks the totals count.
func (d *Driver) CountsByKind(ctx context.Context) (driver.Counts, []driver.KindCounts, error) {
	pipe := d.rdb.Pipeline()
	kindsCmds := make([]*redis.StringSliceCmd, len(d.parts))
	pausedCmds := make([]*redis.StringSliceCmd, len(d.parts))
	for i, p := range d.parts {
		kindsCmds[i] = pipe.SMembers(ctx, p.Kinds())
		pausedCmds[i] = pipe.SMembers(ctx, p.Paused())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return driver.Counts{}, nil, err
	}
	kinds := make([][]string, len(d.parts))
	paused := make([][]string, len(d.parts))
	for i := range d.parts {
		kinds[i], paused[i] = kindsCmds[i].Val(), pausedCmds[i].Val()
	}
	parts, err := d.countParts(ctx, kinds, paused)
	if err != nil {
		return driver.Counts{}, nil, err
	}
	var total driver.Counts
	byKind := map[string]driver.KindCounts{}
	var empty []partKind
	for i, pc := range parts {
		total = total.Plus(pc.total)
		for kind, c := range pc.kinds {
			if c.Counts == (driver.Counts{}) && !c.Paused {
				empty = append(empty, partKind{part: d.parts[i], kind: kind})
			}
			k := byKind[kind]
			k.Kind, k.Counts, k.Paused = kind, k.Counts.Plus(c.Counts), k.Paused || c.Paused
			byKind[kind] = k
		}
	}
	out := make([]driver.KindCounts, 0, len(byKind))
	for _, k := range byKind {
		if k.Counts != (driver.Counts{}) || k.Paused {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b driver.KindCounts) int { return strings.Compare(a.Kind, b.Kind) })
	d.forgetKinds(ctx, empty)
	return total, out, nil
}

// partKind is a kind in one partition.
type partKind struct {
	part Partition
	kind string
}

// forgetKinds drops the kinds found with no task from their partitions'
// sets of kinds, each after checking again in one script; a failure only
// leaves them for the next call.
func (d *Driver) forgetKinds(ctx context.Context, kinds []partKind) {
	calls := make([]scriptCall, len(kinds))
	for i, pk := range kinds {
		keys := append([]string{pk.part.Kinds(), pk.part.Paused()}, pk.part.KindKeys(pk.kind)...)
		calls[i] = scriptCall{keys: keys, args: []any{pk.kind}}
	}
	_, _ = evalEach(ctx, d.rdb, ForgetKindScript, calls)
}

// Ping checks that Redis answers.
func (d *Driver) Ping(ctx context.Context) error { return d.rdb.Ping(ctx).Err() }
