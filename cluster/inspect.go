package cluster

import (
	"context"
	"errors"
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

// countsScript counts the tasks by state and, if asked, by kind. A kind
// with no task that is not paused is left out, and dropped from the set
// of kinds. KEYS: pending, lease, dead, done. ARGV: prefix, "1" for the
// counts by kind. Returns the four totals, then kind, four counts and
// paused (0 or 1) for each kind.
var countsScript = redis.NewScript(luaPublish + luaIndex + `
local p = ARGV[1]
local paused = redis.call('SMEMBERS', p .. ':paused')
local pending = redis.call('ZCARD', KEYS[1])
for _, kind in ipairs(paused) do pending = pending + redis.call('ZCARD', kind_key(p, 'pending', kind)) end
local out = {pending, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[4])}
if ARGV[2] ~= '1' then return out end
local isPaused = {}
for _, kind in ipairs(paused) do isPaused[kind] = true end
local kinds = redis.call('SUNION', p .. ':kinds', p .. ':paused')
table.sort(kinds)
for _, kind in ipairs(kinds) do
  local c = {}
  local total = 0
  for i, st in ipairs({'pending', 'running', 'dead', 'done'}) do
    c[i] = redis.call('ZCARD', kind_key(p, st, kind))
    total = total + c[i]
  end
  if total == 0 and not isPaused[kind] then
    redis.call('SREM', p .. ':kinds', kind)
  else
    local pz = 0
    if isPaused[kind] then pz = 1 end
    for _, v in ipairs({kind, c[1], c[2], c[3], c[4], pz}) do out[#out + 1] = v end
  end
end
return out
`)

// Counts counts the stored tasks by state, for every node of the prefix
// (asynq's Inspector.GetQueueInfo). It costs O(1) in Redis, plus one step
// per paused kind.
func (n *Node) Counts(ctx context.Context) (Counts, error) {
	c, _, err := n.counts(ctx, false)
	return c, err
}

// CountsByKind counts the stored tasks by state, in total and for each
// kind that has stored tasks or is paused, sorted by kind, all read at
// one instant. It costs O(kinds) in Redis.
func (n *Node) CountsByKind(ctx context.Context) (Counts, []KindCounts, error) {
	return n.counts(ctx, true)
}

func (n *Node) counts(ctx context.Context, byKind bool) (Counts, []KindCounts, error) {
	flag := "0"
	if byKind {
		flag = "1"
	}
	vals, err := countsScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.lease(), n.st.dead(), n.st.doneSet()},
		n.st.prefix, flag).Slice()
	if err != nil {
		return Counts{}, nil, failed("counts", err)
	}
	num := func(i int) int64 {
		v, _ := vals[i].(int64)
		return v
	}
	if len(vals) < 4 {
		return Counts{}, nil, failed("counts", errShortReply)
	}
	total := Counts{Pending: num(0), Running: num(1), Dead: num(2), Done: num(3)}
	var kinds []KindCounts
	for i := 4; i+5 < len(vals); i += 6 {
		kind, _ := vals[i].(string)
		kinds = append(kinds, KindCounts{Kind: kind,
			Counts: Counts{Pending: num(i + 1), Running: num(i + 2), Dead: num(i + 3), Done: num(i + 4)},
			Paused: num(i+5) == 1})
	}
	return total, kinds, nil
}
