package cluster

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The store: the Redis keys of one prefix, the time unit the scripts write,
// and the script cache. Every change of state is a Lua script, kept beside
// the Go function that runs it (schedule.go, window.go, claim.go,
// outcome.go, lease.go, cancel.go, members.go); each runs atomically in
// Redis, so no two replicas ever see a half-made change.
//
// Times are microseconds since the Unix epoch, written as integer strings.
// A task's hash keeps the due time it was scheduled for; its score in the
// pending set is when it is to run next (later after a failure). Due times
// come from the scheduling replica's clock (or the trigger); whether a task
// is due, lease expiries, retry times and the times the scripts stamp come
// from Redis's own clock (TIME), so none of them depends on whose clock is
// right.
//
// Every key a script touches shares the store's prefix, whose hash tag keeps
// them in one Redis Cluster slot. Scripts that work on many tasks build the
// task keys from the prefix they are given.

// store names the keys of one prefix and runs the scripts on them.
type store struct {
	rdb    redis.UniversalClient
	prefix string
}

func (s store) pending() string       { return s.prefix + ":pending" }
func (s store) lease() string         { return s.prefix + ":lease" }
func (s store) dead() string          { return s.prefix + ":dead" }
func (s store) nodes() string         { return s.prefix + ":nodes" }
func (s store) taskPrefix() string    { return s.prefix + ":t:" }
func (s store) task(id string) string { return s.taskPrefix() + id }
func (s store) done(id string) string { return s.prefix + ":done:" + id }

// luaNow defines now(): the Redis server's time in microseconds, as an
// integer string.
const luaNow = `
local function now()
  local t = redis.call('TIME')
  return string.format('%.0f', tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
`

// parseMicros converts the store's unit back; Redis may write a score as
// "1.7e+15" style only for non-integers, which the store never writes.
func parseMicros(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("cluster: read the store: bad time %q: %w", s, err)
	}
	return int64(f), nil
}

// loadScripts puts every script in Redis's script cache, so that the first
// call of each is one round trip (EVALSHA) like every later one.
func (s store) loadScripts(ctx context.Context) error {
	for _, sc := range []*redis.Script{scheduleScript, loadScript, claimScript, extendScript,
		completeScript, failScript, releaseScript, reapScript, cancelScript, membersScript} {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}
