package cluster

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The scripts of the bulk actions: bulkScript changes a batch of one
// partition's tasks for RetryAll, DeleteAll and RunNowAll, checking each
// as the single action's script does; CancelAll runs Cancel's script on
// each task, after a check of its state (bulkCancelScript).

// bulkScript applies an action to those of the tasks given that are still
// in a state (of a kind, before a time). Per task it does what retryScript,
// deleteScript or moveScript (run now) does; a task that moved on is left
// as it is. KEYS: the partition's fixed keys, then five per task (see
// luaPart). ARGV: action ("retry", "delete" or "runnow"), state, kind or
// "", time (µs, exclusive) or "", channel, then the tasks' IDs. Returns
// {changed, left because their kind is not the one given, entries without
// their task dropped, Redis's time, left unchanged though still in the
// state's set or the kind's index of it (a task whose sets disagree),
// where a next read would find it again}.
var bulkScript = redis.NewScript(luaNow + luaPublish + luaPart + `
local action, state, filter, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
local before = tonumber(ARGV[4])
local t = now()
local changed, skipped, strays, kept = 0, 0, 0, 0
for j = 6, #ARGV do
  local done = false
  local id = ARGV[j]
  local key, ix = task_keys(j - 5)
  local kind = redis.call('HGET', key, 'kind')
  if not kind then
    -- an entry left without its task: only the sets hold it
    strays = strays + redis.call('ZREM', STATE[state], id) + redis.call('ZREM', ix[state], id)
  elseif not names_kind(ix, kind) then
    skipped = skipped + 1
  elseif (filter == '' or kind == filter) and task_state(key, ix, id) == state then
    local score = tonumber(redis.call('ZSCORE', ix[state], id))
    if score and (not before or score < before) then
      if action == 'retry' then
        index_rem(ix, 'dead', id)
        redis.call('HSET', key, 'attempt', '0', 'lost', '0')
        make_pending(ix, channel, kind, t, id)
        done = true
      elseif action == 'delete' then
        index_rem(ix, state, id)
        redis.call('DEL', key)
        done = true
      elseif action == 'runnow' and score > tonumber(t) then
        make_pending(ix, channel, kind, t, id)
        done = true
      end
    end
  end
  if done then
    changed = changed + 1
  elseif kind and names_kind(ix, kind) then
    local score = tonumber(redis.call('ZSCORE', ix[state], id) or redis.call('ZSCORE', STATE[state], id))
    -- a task due already is past the next read of a run now
    local due = action == 'runnow' and score and score <= tonumber(t)
    if score and (not before or score < before) and not due then kept = kept + 1 end
  end
end
return {changed, skipped, strays, t, kept}
`)

// runBulk runs bulkScript for op on the tasks of byPart (by partition
// index), of the kinds given, at most bulkBatch per script, every script
// in one pipeline.
func (s store) runBulk(ctx context.Context, op string, sel Selection, byPart map[int][]string, kinds map[string]string) (map[int]partOutcome, error) {
	before := sel.beforeArg()
	var calls []scriptCall
	var owner []int // the partition of each call
	for pi, ids := range byPart {
		p := s.parts[pi]
		for _, batch := range chunks(ids, bulkBatch) {
			c := scriptCall{keys: p.fixedKeys(), args: []any{op, string(sel.State), sel.Kind, before, p.channel()}}
			for _, id := range batch {
				c.keys = append(append(c.keys, p.task(id)), p.kindKeys(kindOr(kinds[id], sel.Kind))...)
				c.args = append(c.args, id)
			}
			calls = append(calls, c)
			owner = append(owner, pi)
		}
	}
	cmds, err := evalEach(ctx, s.rdb, bulkScript, calls)
	if err != nil {
		return nil, err
	}
	out := make(map[int]partOutcome, len(byPart))
	var firstErr error
	for i, c := range cmds {
		vals, err := c.Slice()
		if err == nil && len(vals) < 5 {
			err = fmt.Errorf("%w: %d values", errBulkReply, len(vals))
		}
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		o := out[owner[i]]
		o.changed += intOf(vals[0])
		o.skipped += intOf(vals[1])
		o.strays += intOf(vals[2])
		o.now, _ = vals[3].(string)
		o.kept += intOf(vals[4])
		o.given += len(calls[i].args) - 5
		out[owner[i]] = o
	}
	return out, firstErr
}

// beforeArg is sel.Before as the bulk scripts take it: µs, or "" for
// none.
func (sel Selection) beforeArg() string {
	if sel.Before.IsZero() {
		return ""
	}
	return strconv.FormatInt(sel.Before.UnixMicro(), 10)
}

// kindOr is kind, or fallback for a task whose kind could not be read
// (gone, or an entry left without its task).
func kindOr(kind, fallback string) string {
	if kind == "" {
		return fallback
	}
	return kind
}

// intOf reads an integer of a script's reply; anything else is 0.
func intOf(v any) int {
	i, _ := v.(int64)
	return int(i)
}

// bulkCancelScript is Cancel's script run on a task only if it is still
// in a state (of a kind, before a time): the check CancelAll adds. KEYS:
// the task's keys (partition.taskKeys). ARGV: Cancel's five, then the
// state, the time (µs, exclusive) or "", the kind or "". Returns Cancel's
// {removed, was leased}, then 1 if it dropped an entry left without its
// task, and 1 if it left the task though it is still in the state's set
// or the kind's index of it (its sets disagree).
var bulkCancelScript = redis.NewScript(luaNow + luaPublish + luaPart + luaHistory + luaKeepDone + `
local want, before, filter = ARGV[6], tonumber(ARGV[7]), ARGV[8]
local stored = redis.call('HGET', TASK, 'kind')
if not stored then
  return {0, 0, redis.call('ZREM', STATE[want], ARGV[1]) + redis.call('ZREM', INDEX[want], ARGV[1]), 0}
end
if wrong_kind(stored) then return redis.error_reply('KIND ' .. stored) end
if filter ~= '' and stored ~= filter then return {0, 0, 0, 0} end
local score = tonumber(redis.call('ZSCORE', INDEX[want], ARGV[1]) or redis.call('ZSCORE', STATE[want], ARGV[1]))
local selected = score and (not before or score < before)
if not selected then return {0, 0, 0, 0} end
if task_state(TASK, INDEX, ARGV[1]) ~= want then return {0, 0, 0, 1} end
` + luaCancel)

// cancelEach runs bulkCancelScript on each task of byPart (by partition
// index), of the kinds given, in one pipeline, and drops the removed ones
// from this node's window and runs, as Cancel does.
func (n *Node) cancelEach(ctx context.Context, sel Selection, byPart map[int][]string, kinds map[string]string) (map[int]partOutcome, error) {
	before := sel.beforeArg()
	var calls []scriptCall
	var ids []string
	var owner []int
	for pi, list := range byPart {
		p := n.st.parts[pi]
		for _, id := range list {
			args := append([]any{id, n.cfg.retention.Milliseconds(), p.channel()}, n.cfg.keepDone.args()...)
			args = append(args, string(sel.State), before, sel.Kind)
			calls = append(calls, scriptCall{keys: p.taskKeys(kindOr(kinds[id], sel.Kind), id), args: args})
			ids = append(ids, id)
			owner = append(owner, pi)
		}
	}
	cmds, err := evalEach(ctx, n.st.rdb, bulkCancelScript, calls)
	if err != nil {
		return nil, err
	}
	out := make(map[int]partOutcome, len(byPart))
	var firstErr error
	for i, c := range cmds {
		o := out[owner[i]]
		vals, err := c.Int64Slice()
		switch {
		case err != nil:
			if _, ok := kindError(err); ok {
				// the ID names a new task of another kind: not the one read
				o.skipped++
			} else {
				firstErr = cmp.Or(firstErr, err)
			}
		case len(vals) >= 1 && vals[0] == 1:
			o.changed++
			n.unload(ids[i])
			n.cancelRun(ids[i])
		case len(vals) >= 4:
			o.strays += int(vals[2])
			o.kept += int(vals[3])
		}
		o.given++
		out[owner[i]] = o
	}
	return out, firstErr
}
