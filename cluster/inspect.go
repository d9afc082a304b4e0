package cluster

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Inspecting the store: Node.Get, Node.Counts and Node.CountsByKind,
// read-only.

// State is where a stored task is.
type State string

const (
	// Pending tasks wait for their due time (or their retry), or for
	// their kind to be resumed (Node.Pause).
	Pending State = "pending"
	// Running tasks are claimed by a node and held under a lease.
	Running State = "running"
	// Dead tasks failed past their retry limit, or were lost to faults
	// past the limit of lost runs; they stay until deleted, retried,
	// purged or canceled.
	Dead State = "dead"
	// Done records are the tasks that ran to completion or were
	// canceled, kept only with WithKeepDone.
	Done State = "done"
)

// validState checks that state is one of the four, for what.
func validState(what string, state State) error {
	switch state {
	case Pending, Running, Dead, Done:
		return nil
	}
	return invalid(what, "unknown state %q: want pending, running, dead or done", state)
}

// Info describes a stored task (asynq's TaskInfo, River's JobRow). Its
// Task's Attempt and Lost are the two counts: failed runs, which use up
// MaxRetries, and runs lost to faults, which use up the node's
// WithMaxLostRuns.
type Info struct {
	Task
	State State
	// MaxRetries is the task's retry limit.
	MaxRetries int
	// LastError is the error of the last failed or lost run, or "". For
	// a panic it holds the stack too.
	LastError string
	// Owner is the name of the node running the task (Node.Name), the
	// holder of its lease; "" unless Running.
	Owner string
	// Started is when the run in flight was claimed, by Redis's clock;
	// zero unless Running.
	Started time.Time
	// Finished is when a done record's task completed or was canceled;
	// zero unless Done.
	Finished time.Time
	// Retrying is true for a pending task that has run and failed or been
	// lost at least once since it was stored or last retried by hand:
	// asynq's "retry" state, River's "retryable".
	Retrying bool
	// Paused is true if the task's kind is paused (Node.Pause): a pending
	// task waits for Node.Resume.
	Paused bool
	// History holds the task's last runs, oldest first (at most
	// MaxHistory).
	History []RunRecord
}

// getScript reads a task and where it is. KEYS: task. ARGV: id, prefix.
// Returns {} if there is no such task, else {state, paused (0 or 1),
// field, value, ...}.
var getScript = redis.NewScript(luaPublish + luaIndex + `
local st, kind = task_state(ARGV[2], KEYS[1], ARGV[1])
if kind == '' then return {} end
if st == 'missing' then st = 'pending' end
local out = {st, tostring(redis.call('SISMEMBER', ARGV[2] .. ':paused', kind))}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do out[#out + 1] = v end
return out
`)

// Get reads the stored task id, with its run history; ok is false if there
// is none (never stored, canceled, or run to completion without
// WithKeepDone). It is asynq's Inspector.GetTaskInfo and River's JobGet.
func (n *Node) Get(ctx context.Context, id string) (info Info, ok bool, err error) {
	vals, err := getScript.Run(ctx, n.st.rdb, []string{n.st.task(id)}, id, n.st.prefix).StringSlice()
	if err != nil {
		return Info{}, false, failed("get "+id, err)
	}
	if len(vals) < 2 {
		return Info{}, false, nil
	}
	f := make(map[string]string, (len(vals)-2)/2)
	for i := 2; i+1 < len(vals); i += 2 {
		f[vals[i]] = vals[i+1]
	}
	return infoFromHash(id, State(vals[0]), vals[1] == "1", f), true, nil
}

// infoFromHash reads a task's hash, found in state.
func infoFromHash(id string, state State, paused bool, f map[string]string) Info {
	info := Info{State: state, Paused: paused}
	due, _ := parseMicros(f["due"])
	info.ID = id
	info.Kind = f["kind"]
	info.Payload = []byte(f["payload"])
	info.Due = time.UnixMicro(due)
	info.Attempt, _ = strconv.Atoi(f["attempt"])
	info.Lost, _ = strconv.Atoi(f["lost"])
	info.MaxRetries, _ = strconv.Atoi(f["max"])
	info.LastError = f["err"]
	info.History = parseHistory(f["hist"])
	if state == Running && f["owner"] != "" {
		info.Owner = ownerNode(f["owner"])
		if us, err := parseMicros(f["start"]); err == nil {
			info.Started = time.UnixMicro(us)
		}
	}
	if state == Done {
		if us, err := parseMicros(f["fin"]); err == nil {
			info.Finished = time.UnixMicro(us)
		}
	}
	info.Retrying = state == Pending && (info.Attempt > 0 || info.Lost > 0)
	return info
}

// errShortReply is the cause of the error of a script whose reply is
// shorter than the script writes.
var errShortReply = errors.New("short reply from Redis")

// Counts is how many tasks the store holds in each state. A pending task
// of a paused kind counts as pending.
type Counts struct {
	Pending, Running, Dead, Done int64
}

// KindCounts is how many tasks of one kind the store holds in each state,
// and whether the kind is paused.
type KindCounts struct {
	Kind string
	Counts
	Paused bool
}

// countsScript counts the tasks by state. KEYS: pending, lease, dead,
// done. ARGV: prefix. Returns the four totals.
var countsScript = redis.NewScript(luaPublish + luaIndex + `
local p = ARGV[1]
local pending = redis.call('ZCARD', KEYS[1])
for _, kind in ipairs(redis.call('SMEMBERS', p .. ':paused')) do
  pending = pending + redis.call('ZCARD', kind_key(p, 'pending', kind))
end
return {pending, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[4])}
`)

// forgetKindScript drops kind from the set of kinds if it has no task left
// and is not paused. KEYS: kinds, paused. ARGV: prefix, kind.
var forgetKindScript = redis.NewScript(luaPublish + luaIndex + `
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then return 0 end
for _, st in ipairs({'pending', 'running', 'dead', 'done'}) do
  if redis.call('EXISTS', kind_key(ARGV[1], st, ARGV[2])) == 1 then return 0 end
end
return redis.call('SREM', KEYS[1], ARGV[2])
`)

// Counts counts the stored tasks by state, for every node of the prefix
// (asynq's Inspector.GetQueueInfo), at one instant. It costs O(1) in
// Redis, plus one step per paused kind.
func (n *Node) Counts(ctx context.Context) (Counts, error) {
	vals, err := countsScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.lease(), n.st.dead(), n.st.doneSet()},
		n.st.prefix).Int64Slice()
	if err != nil {
		return Counts{}, failed("counts", err)
	}
	if len(vals) < 4 {
		return Counts{}, failed("counts", errShortReply)
	}
	return Counts{Pending: vals[0], Running: vals[1], Dead: vals[2], Done: vals[3]}, nil
}

// CountsByKind counts the stored tasks by state, in total and for each
// kind that has stored tasks or is paused, sorted by kind. It reads the
// totals in one step and the kinds' counts in one round trip of O(kinds)
// commands that never hold Redis for long, so the two may differ by the
// changes made in between. A kind left with no task and not paused is
// dropped from the set of kinds, and from the result.
func (n *Node) CountsByKind(ctx context.Context) (Counts, []KindCounts, error) {
	total, err := n.Counts(ctx)
	if err != nil {
		return Counts{}, nil, err
	}
	pipe := n.st.rdb.Pipeline()
	kindsCmd := pipe.SMembers(ctx, n.st.kinds())
	pausedCmd := pipe.SMembersMap(ctx, n.st.paused())
	if _, err := pipe.Exec(ctx); err != nil {
		return Counts{}, nil, failed("counts by kind", err)
	}
	paused := pausedCmd.Val()
	names := kindsCmd.Val()
	for kind := range paused {
		if !slices.Contains(names, kind) {
			names = append(names, kind)
		}
	}
	slices.Sort(names)
	states := []State{Pending, Running, Dead, Done}
	pipe = n.st.rdb.Pipeline()
	cards := make([]*redis.IntCmd, 0, len(names)*len(states))
	for _, kind := range names {
		for _, st := range states {
			cards = append(cards, pipe.ZCard(ctx, n.st.kindIndex(st, kind)))
		}
	}
	if len(cards) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return Counts{}, nil, failed("counts by kind", err)
		}
	}
	kinds := make([]KindCounts, 0, len(names))
	var empty []string
	for i, kind := range names {
		c := cards[i*len(states) : (i+1)*len(states)]
		k := KindCounts{Kind: kind, Counts: Counts{Pending: c[0].Val(), Running: c[1].Val(), Dead: c[2].Val(), Done: c[3].Val()}}
		_, k.Paused = paused[kind]
		if k.Counts == (Counts{}) && !k.Paused {
			empty = append(empty, kind)
			continue
		}
		kinds = append(kinds, k)
	}
	n.forgetKinds(ctx, empty)
	return total, kinds, nil
}

// forgetKinds drops the kinds found with no task from the set of kinds,
// each after checking again in one script; a failure only leaves them for
// the next call.
func (n *Node) forgetKinds(ctx context.Context, kinds []string) {
	if len(kinds) == 0 {
		return
	}
	pipe := n.st.rdb.Pipeline()
	for _, kind := range kinds {
		// Eval, not Run: in a pipeline a missing script cannot fall back.
		forgetKindScript.Eval(ctx, pipe, []string{n.st.kinds(), n.st.paused()}, n.st.prefix, kind)
	}
	_, _ = pipe.Exec(ctx)
}
