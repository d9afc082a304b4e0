package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Done records: with WithKeepDone, a task that ran to completion (or was
// canceled) is kept, with its payload and run history, in the Done state,
// within bounds of age and number. Without it a completed task is deleted,
// as before. asynq's counterpart is the Retention option of a task (kept
// as "completed"), River's the completed jobs its job cleaner deletes
// after CompletedJobRetentionPeriod (24 h by default).

// keepDone is the setting of WithKeepDone.
type keepDone struct {
	on  bool // WithKeepDone was given
	age time.Duration
	max int
}

// WithKeepDone keeps the record of each task that ran to completion (or
// was canceled) in the Done state, so that Node.Get, Node.List and the
// counts show it, newest first: at most max records, none older than age.
// The script that adds a record removes those past the bounds (at most 100
// at a time), and every started node's reaper removes the ones that aged
// out since, every quarter lease, so the records never grow past the
// bounds for long. Without it (the default)
// a completed task is deleted. An age of zero or less, or a max below 1, is
// an error wrapping scheduler.ErrInvalidArgument at New. Nodes of one
// prefix should agree on it: a node without it deletes what it completes.
func WithKeepDone(age time.Duration, max int) Option {
	return optionFunc(func(c *config) { c.keepDone = keepDone{on: true, age: age, max: max} })
}

// validate checks the bounds given to WithKeepDone.
func (k keepDone) validate() error {
	if !k.on {
		return nil
	}
	if k.age <= 0 || k.max < 1 {
		return invalid("New", "keep done: age %v and max %d must be > 0", k.age, k.max)
	}
	return nil
}

// args are the script arguments of the setting: age (µs) and max, max 0
// when done records are not kept.
func (k keepDone) args() []any {
	if !k.on {
		return []any{0, 0}
	}
	return []any{k.age.Microseconds(), k.max}
}

// doneTrimBatch is how many done records the script that adds one removes
// at most; the reaper removes up to reapBatch per script.
const doneTrimBatch = 100

// luaTrim defines remove_task, which deletes task id of state and its
// index entries, and trim_done, which removes done records past the bounds
// at time t: older than age (µs), and the oldest beyond max; at most batch
// of them. It returns how many it removed. Include it after luaIndex.
const luaTrim = `
local function remove_task(p, state, id)
  local key = p .. ':t:' .. id
  local kind = redis.call('HGET', key, 'kind')
  redis.call('ZREM', state_key(p, state), id)
  if kind then redis.call('ZREM', kind_key(p, state, kind), id) end
  redis.call('DEL', key)
end
local function trim_done(p, t, age, max, batch)
  local set = p .. ':done'
  local cut = string.format('%.0f', tonumber(t) - tonumber(age))
  local old = redis.call('ZRANGE', set, '-inf', '(' .. cut, 'BYSCORE', 'LIMIT', 0, batch)
  for _, id in ipairs(old) do remove_task(p, 'done', id) end
  local n = #old
  local over = math.min(redis.call('ZCARD', set) - tonumber(max), batch - n)
  if over > 0 then
    for _, id in ipairs(redis.call('ZRANGE', set, 0, over - 1)) do remove_task(p, 'done', id) end
    n = n + over
  end
  return n
end
`

// luaKeepDone defines keep_done, which turns the task under key, whose run
// just ended at t, into a done record of kind and trims the done records;
// with max "0" it deletes the task instead. Include it after luaTrim.
var luaKeepDone = fmt.Sprintf(`
local function keep_done(p, key, id, kind, t, age, max)
  if tonumber(max) < 1 then
    redis.call('DEL', key)
    return
  end
  redis.call('HDEL', key, 'owner', 'next', 'start')
  redis.call('HSET', key, 'fin', t)
  index_add(p, 'done', kind, t, id)
  trim_done(p, t, age, max, %d)
end
`, doneTrimBatch)

// trimScript removes the done records past the bounds, by Redis's clock.
// KEYS: done. ARGV: prefix, age (µs), max, batch. Returns how many it
// removed.
var trimScript = redis.NewScript(luaNow + luaPublish + luaIndex + luaTrim + `
return trim_done(ARGV[1], now(), ARGV[2], ARGV[3], tonumber(ARGV[4]))
`)

// trimDone removes the done records past the node's bounds, a batch per
// script, until none is left; the reaper calls it.
func (n *Node) trimDone(ctx context.Context) error {
	if !n.cfg.keepDone.on {
		return nil
	}
	for {
		k, err := trimScript.Run(ctx, n.st.rdb, []string{n.st.doneSet()},
			n.st.prefix, n.cfg.keepDone.age.Microseconds(), n.cfg.keepDone.max, reapBatch).Int()
		if err != nil || k < reapBatch {
			return err
		}
	}
}
