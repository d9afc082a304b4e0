package cluster

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The claim: one script moves a due task from pending to leased for one
// owner, so only one node can win it. It checks the due time against
// Redis's clock, so a node whose clock runs ahead is told to wait, and
// never starts a task before its due time by Redis's clock.

// claimOutcome is what a claim found.
type claimOutcome int

const (
	claimGone    claimOutcome = iota // not pending: claimed elsewhere, canceled or done
	claimWon                         // claimed: this node holds the lease
	claimLater                       // pending, but due later than the node expected
	claimEarly                       // pending for the expected time, not yet due by Redis's clock
	claimSkipped                     // a periodic occurrence the misfire policy skipped (misfire.go)
	claimBlocked                     // a periodic occurrence that waits for another one (misfire.go)
)

// claimResult is what a claim returned: for claimWon the task, for
// claimLater and claimEarly its kind and the time it is due (and, for
// claimEarly, Redis's time then).
type claimResult struct {
	outcome  claimOutcome
	kind     string
	payload  []byte
	due      int64         // µs: the task's due time (claimWon), or when it is pending for
	redisNow int64         // µs: Redis's clock at the claim (claimEarly, claimBlocked)
	wait     time.Duration // how long a blocked occurrence waits before it is claimed again (claimBlocked)
	attempt  int           // failed runs so far
	lost     int           // runs lost to faults so far
	meta     string        // the observer's metadata stored with the task (claimWon)
}

// claimScript moves a due task from pending to leased, for one owner,
// stamps the claim's start (field "start", for the run history) and
// remembers its pending score (field "next") for a hand-back.
// KEYS: the task's keys (partition.taskKeys). ARGV: id, expected due,
// lease (µs), owner token, channel. A won claim publishes "claimed <id>",
// so that the other nodes drop the task from their windows without
// claiming it in vain. A task of a paused kind is never claimed: it is not
// in the pending set (pause.go), and the script checks the kind again.
// Returns {0} if the task is not pending (claimed elsewhere, canceled, done
// or paused), {2, score, kind} if it is pending for a later time than
// expected, {3, score, kind, now} if it is not due yet by Redis's clock, or
// {1, kind, payload, due, attempt, lost, metadata} once claimed.
var claimScript = redis.NewScript(luaNow + luaPublish + luaPart + claimBody)

// claimBody is claimScript after its definitions; the claim of a periodic
// occurrence (misfire.go) runs its own rules first, then this.
const claimBody = `
local s = redis.call('ZSCORE', STATE.pending, ARGV[1])
if not s then return {0} end
if tonumber(s) > tonumber(ARGV[2]) then return {2, s, redis.call('HGET', TASK, 'kind') or ''} end
local t = now()
if tonumber(s) > tonumber(t) then return {3, s, redis.call('HGET', TASK, 'kind') or '', t} end
local f = redis.call('HMGET', TASK, 'kind', 'payload', 'due', 'attempt', 'lost', 'meta')
if f[1] and wrong_kind(f[1]) then return redis.error_reply('KIND ' .. f[1]) end
redis.call('ZREM', STATE.pending, ARGV[1])
if not f[1] then return {0} end
if redis.call('SISMEMBER', PAUSED, f[1]) == 1 then
  -- left waiting in its kind's index, as Pause leaves it
  redis.call('ZADD', INDEX.pending, s, ARGV[1])
  redis.call('SADD', KINDS, f[1])
  return {0}
end
redis.call('ZREM', INDEX.pending, ARGV[1])
index_add(INDEX, 'running', f[1], string.format('%.0f', tonumber(t) + tonumber(ARGV[3])), ARGV[1])
redis.call('HSET', TASK, 'owner', ARGV[4], 'next', s, 'start', t)
publish_claimed(ARGV[5], ARGV[1])
return {1, f[1], f[2], f[3], f[4], f[5] or '0', f[6] or ''}
`

// claim claims task id of kind (as the window knows it) pending for due.
func (s store) claim(ctx context.Context, id, kind string, due int64, lease time.Duration, token string) (claimResult, error) {
	return s.runClaim(ctx, claimScript, id, kind, due, lease, token)
}

// runClaim runs sc, claimScript or one that runs its body last, with the
// claim's arguments followed by more, and reads its reply.
func (s store) runClaim(ctx context.Context, sc *redis.Script, id, kind string, due int64, lease time.Duration, token string, more ...any) (claimResult, error) {
	p := s.partOf(id)
	vals, err := withKind(kind, func(kind string) ([]any, error) {
		args := append([]any{id, strconv.FormatInt(due, 10), lease.Microseconds(), token, p.channel()}, more...)
		return sc.Run(ctx, s.rdb, p.taskKeys(kind, id), args...).Slice()
	})
	if err != nil {
		return claimResult{}, err
	}
	str := func(i int) string {
		if i >= len(vals) {
			return ""
		}
		v, _ := vals[i].(string)
		return v
	}
	code, _ := vals[0].(int64)
	switch code {
	case 1:
		r := claimResult{outcome: claimWon, kind: str(1), payload: []byte(str(2)), meta: str(6)}
		if r.due, err = parseMicros(str(3)); err != nil {
			return claimResult{}, err
		}
		r.attempt, _ = strconv.Atoi(str(4))
		r.lost, _ = strconv.Atoi(str(5))
		return r, nil
	case 2, 3:
		r := claimResult{outcome: claimLater, kind: str(2)}
		if r.due, err = parseMicros(str(1)); err != nil {
			return claimResult{}, err
		}
		if code == 3 {
			r.outcome = claimEarly
			if r.redisNow, err = parseMicros(str(3)); err != nil {
				return claimResult{}, err
			}
		}
		return r, nil
	case 4:
		return claimResult{outcome: claimSkipped}, nil
	case 5:
		until, err := parseMicros(str(1))
		if err != nil {
			return claimResult{}, err
		}
		now, err := parseMicros(str(2))
		if err != nil {
			return claimResult{}, err
		}
		return claimResult{outcome: claimBlocked, wait: blockedWait(until, now, lease)}, nil
	}
	return claimResult{outcome: claimGone}, nil
}
