package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Inspecting the store: Node.Get, Node.Counts and Node.CountsByKind,
// read-only.

// State is where a stored task is.
type State = driver.State

const (
	// Pending tasks wait for their due time (or their retry), or for
	// their kind to be resumed (Node.Pause).
	Pending = driver.Pending
	// Running tasks are claimed by a node and held under a lease.
	Running = driver.Running
	// Dead tasks failed past their retry limit, or were lost to faults
	// past the limit of lost runs; they stay until deleted, retried,
	// purged or canceled.
	Dead = driver.Dead
	// Done records are the tasks that ran to completion or were
	// canceled, kept only with WithKeepDone.
	Done = driver.Done
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
	// NextRun is when a pending task runs next, by Redis's clock: its due
	// time on a first run, the retry's time (Redis's time of the failure
	// plus the backoff) while it waits to be retried, the time it was moved
	// to by RunNow or Reschedule, and its time before a hand-back. It is
	// the task's score in the pending set, which orders Node.List of
	// pending tasks and its cursor; a task of a paused kind keeps it and
	// waits for Node.Resume. Zero unless Pending. Task.Due keeps the time
	// the task was scheduled for (asynq's TaskInfo.NextProcessAt, River's
	// JobRow.ScheduledAt).
	NextRun time.Time
	// Finished is when a done record's task completed or was canceled;
	// zero unless Done.
	Finished time.Time
	// Canceled is true for a done record of a task that Node.Cancel (or
	// CancelAll) removed rather than one that ran to completion: its last
	// run record says OutcomeCanceled. False unless Done.
	Canceled bool
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

// Get reads the stored task id, with its run history; ok is false if there
// is none (never stored, canceled, or run to completion without
// WithKeepDone). It is asynq's Inspector.GetTaskInfo and River's JobGet.
// It is one script on the task's partition, which needs no kind index,
// and reads Info.NextRun from the pending set in the same step; a pending
// task of a paused kind, which waits in its kind's index only, costs a
// second read there.
func (n *Node) Get(ctx context.Context, id string) (info Info, ok bool, err error) {
	p := n.st.partOf(id)
	keys := []string{p.Pending(), p.Lease(), p.Dead(), p.DoneSet(), p.Paused(), p.Task(id)}
	vals, err := redisdriver.GetScript.Run(ctx, n.st.rdb, keys, id).StringSlice()
	if err != nil {
		return Info{}, false, n.failed("get "+id, err)
	}
	if len(vals) < 3 {
		return Info{}, false, nil
	}
	f := make(map[string]string, (len(vals)-3)/2)
	for i := 3; i+1 < len(vals); i += 2 {
		f[vals[i]] = vals[i+1]
	}
	info = infoFromHash(id, State(vals[0]), vals[1] == "1", f)
	next := vals[2]
	if info.State == Pending && next == "" {
		score, err := n.st.rdb.ZScore(ctx, p.KindIndex(string(Pending), info.Kind), id).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return Info{}, false, n.failed("get "+id, err)
		}
		if err == nil {
			next = strconv.FormatFloat(score, 'f', 0, 64)
		}
	}
	if info.State == Pending && next != "" {
		if us, err := parseMicros(next); err == nil {
			info.NextRun = time.UnixMicro(us)
		}
	}
	return info, true, nil
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
		if h := info.History; len(h) > 0 && h[len(h)-1].Outcome == OutcomeCanceled {
			info.Canceled = true
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

// partCounts is what redisdriver.CountsScript found in one partition.
type partCounts struct {
	total Counts
	kinds map[string]KindCounts
}

// countParts runs redisdriver.CountsScript in every partition, in one round trip (two
// when a partition's paused kinds are not those given), for the kinds
// given for each partition (by index; nil for none) besides the paused
// ones.
func (s store) countParts(ctx context.Context, kinds [][]string, paused [][]string) ([]partCounts, error) {
	if paused == nil {
		paused = make([][]string, len(s.parts))
	}
	replies, err := pausedCalls(ctx, s.rdb, redisdriver.CountsScript, s.parts, paused, func(p partition, paused []string) scriptCall {
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
	out := make([]partCounts, len(s.parts))
	for i, r := range replies {
		vals, _ := r.([]any)
		nums := make([]int64, len(vals))
		for j, v := range vals {
			nums[j], _ = v.(int64)
		}
		if len(nums) < 4 || (len(nums)-4)%5 != 0 {
			return nil, fmt.Errorf("%w: %d values", errShortReply, len(nums))
		}
		pc := partCounts{total: Counts{Pending: nums[0], Running: nums[1], Dead: nums[2], Done: nums[3]},
			kinds: map[string]KindCounts{}}
		// The kinds come back in the order they were given: rebuild it.
		names := union(paused[i], kinds[i])
		if len(names) != (len(nums)-4)/5 {
			return nil, fmt.Errorf("%w: %d values for %d kinds", errShortReply, len(nums), len(names))
		}
		for j, kind := range names {
			c := nums[4+5*j:]
			pc.kinds[kind] = KindCounts{Kind: kind, Counts: Counts{Pending: c[0], Running: c[1], Dead: c[2], Done: c[3]},
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

// Counts counts the stored tasks by state, for every node of the prefix
// (asynq's Inspector.GetQueueInfo): each partition at one instant, all of
// them in one round trip. It costs O(P) in Redis for P partitions, plus
// one step per partition and paused kind.
func (n *Node) Counts(ctx context.Context) (Counts, error) {
	parts, err := n.st.countParts(ctx, make([][]string, len(n.st.parts)), nil)
	if err != nil {
		return Counts{}, n.failed("counts", err)
	}
	var total Counts
	for _, pc := range parts {
		total = total.plus(pc.total)
	}
	return total, nil
}

// plus is the sum of c and d.
func (c Counts) plus(d Counts) Counts {
	return Counts{Pending: c.Pending + d.Pending, Running: c.Running + d.Running, Dead: c.Dead + d.Dead,
		Done: c.Done + d.Done}
}

// CountsByKind counts the stored tasks by state, in total and for each
// kind that has stored tasks or is paused (in any partition), sorted by
// kind. It reads the kinds of every partition in one round trip, then
// counts each partition at one instant, all of them in a second round trip
// of one script per partition that makes O(kinds) steps; the kinds read
// first may miss one stored in between, whose tasks the totals count. A
// kind left with no task in a partition and not paused there is dropped
// from the partition's set of kinds, and a kind with no task left at all
// and paused nowhere from the result.
func (n *Node) CountsByKind(ctx context.Context) (Counts, []KindCounts, error) {
	pipe := n.st.rdb.Pipeline()
	kindsCmds := make([]*redis.StringSliceCmd, len(n.st.parts))
	pausedCmds := make([]*redis.StringSliceCmd, len(n.st.parts))
	for i, p := range n.st.parts {
		kindsCmds[i] = pipe.SMembers(ctx, p.Kinds())
		pausedCmds[i] = pipe.SMembers(ctx, p.Paused())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return Counts{}, nil, n.failed("counts by kind", err)
	}
	kinds := make([][]string, len(n.st.parts))
	paused := make([][]string, len(n.st.parts))
	for i := range n.st.parts {
		kinds[i], paused[i] = kindsCmds[i].Val(), pausedCmds[i].Val()
	}
	parts, err := n.st.countParts(ctx, kinds, paused)
	if err != nil {
		return Counts{}, nil, n.failed("counts by kind", err)
	}
	var total Counts
	byKind := map[string]KindCounts{}
	var empty []partKind
	for i, pc := range parts {
		total = total.plus(pc.total)
		for kind, c := range pc.kinds {
			if c.Counts == (Counts{}) && !c.Paused {
				empty = append(empty, partKind{part: n.st.parts[i], kind: kind})
			}
			k := byKind[kind]
			k.Kind, k.Counts, k.Paused = kind, k.Counts.plus(c.Counts), k.Paused || c.Paused
			byKind[kind] = k
		}
	}
	out := make([]KindCounts, 0, len(byKind))
	for _, k := range byKind {
		if k.Counts != (Counts{}) || k.Paused {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b KindCounts) int { return strings.Compare(a.Kind, b.Kind) })
	n.forgetKinds(ctx, empty)
	return total, out, nil
}

// partKind is a kind in one partition.
type partKind struct {
	part partition
	kind string
}

// forgetKinds drops the kinds found with no task from their partitions'
// sets of kinds, each after checking again in one script; a failure only
// leaves them for the next call.
func (n *Node) forgetKinds(ctx context.Context, kinds []partKind) {
	calls := make([]scriptCall, len(kinds))
	for i, pk := range kinds {
		keys := append([]string{pk.part.Kinds(), pk.part.Paused()}, pk.part.KindKeys(pk.kind)...)
		calls[i] = scriptCall{keys: keys, args: []any{pk.kind}}
	}
	_, _ = evalEach(ctx, n.st.rdb, redisdriver.ForgetKindScript, calls)
}
