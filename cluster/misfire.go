package cluster

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Misfires and overlap of periodic tasks: what happens to the occurrences
// of one periodic task that are overdue together (after a Pause, while
// every node was down, while the nodes were cut off from Redis, or while
// the previous occurrence ran), and whether two of its occurrences may run
// at once. Quartz's misfire instructions and @DisallowConcurrentExecution;
// the root module's MissedRunPolicy is the same rule for one process.
//
// The rules are part of the claim (periodicClaimScript): every occurrence
// of a periodic task is stored in the one partition of its name (see
// partitionIndex), so the script that claims one sees all the others, and
// decides by Redis's clock, atomically, whether it runs, is skipped or
// waits. Two nodes cannot decide differently, and since a skipped
// occurrence leaves a done marker under its ID (name@due), no node stores
// it again and nothing runs twice.

// Misfire says what a periodic task does with occurrences that are
// overdue when a node claims them (Quartz's misfire instruction). An
// occurrence is missed when, as it is claimed, the trigger's next
// occurrence after it is due too by Redis's clock. A failed run's retries
// are not occurrences: they run as any task's.
type Misfire int

const (
	// MisfireCoalesce runs one occurrence for all the missed ones: the
	// latest that is due. The missed ones are skipped, and the runs go on
	// at the trigger's times after it (Quartz's "fire once now", the
	// root module's CoalesceMissed). The default. If every node was down,
	// the first sweep after a node starts stores that latest occurrence.
	MisfireCoalesce Misfire = iota
	// MisfireSkip runs none of the missed occurrences, nor one that is
	// late by more than the misfire threshold (a second, or half the time
	// to the next occurrence if that is shorter): the next run is the
	// trigger's first time still ahead (Quartz's "do nothing").
	MisfireSkip
	// MisfireRunEach runs every missed occurrence, one after another, in
	// the order of their due times (Quartz's "ignore misfire policy", the
	// root module's CatchUpMissed). If every node was down, the sweeps
	// after a node starts store the occurrences that fell meanwhile.
	MisfireRunEach
)

// String names the policy.
func (m Misfire) String() string {
	switch m {
	case MisfireCoalesce:
		return "MisfireCoalesce"
	case MisfireSkip:
		return "MisfireSkip"
	case MisfireRunEach:
		return "MisfireRunEach"
	}
	return fmt.Sprintf("Misfire(%d)", int(m))
}

// lua is the policy's name in the claim script and the store.
func (m Misfire) lua() string {
	switch m {
	case MisfireSkip:
		return "skip"
	case MisfireRunEach:
		return "each"
	}
	return "coalesce"
}

// misfireOf reads a policy's name as lua writes it; ok is false for an
// unknown one.
func misfireOf(s string) (m Misfire, ok bool) {
	for _, m := range []Misfire{MisfireCoalesce, MisfireSkip, MisfireRunEach} {
		if m.lua() == s {
			return m, true
		}
	}
	return MisfireCoalesce, false
}

// misfireThreshold is how late an occurrence may start under MisfireSkip,
// at most: Quartz's misfireThreshold (60 s there). Half the time to the
// next occurrence if that is shorter.
const misfireThreshold = time.Second

// threshold is the misfire threshold of the occurrence due at due, whose
// next occurrence is next (zero if none).
func threshold(due, next time.Time) time.Duration {
	if next.IsZero() {
		return misfireThreshold
	}
	return min(misfireThreshold, next.Sub(due)/2)
}

// PeriodicOption is the option WithMisfire and WithOverlap return: a
// HandleOption that only Node.Periodic accepts; Node.Handle and HandleJSON
// refuse it with an error wrapping scheduler.ErrInvalidArgument.
type PeriodicOption struct{ apply func(*periodicConfig) }

func (o PeriodicOption) applyHandle(h *handleConfig) {
	o.apply(&h.periodic)
	h.periodic.given = true
}

// periodicConfig holds the settings of one periodic task.
type periodicConfig struct {
	misfire Misfire
	overlap bool
	given   bool // a PeriodicOption was applied
}

// WithMisfire sets what a periodic task does with its missed occurrences
// (default MisfireCoalesce). A value other than the three policies is an
// error wrapping scheduler.ErrInvalidArgument at Node.Periodic.
func WithMisfire(m Misfire) PeriodicOption {
	return PeriodicOption{apply: func(c *periodicConfig) { c.misfire = m }}
}

// WithOverlap says whether two occurrences of a periodic task may run at
// once. By default (false) they never do anywhere in the cluster (Quartz's
// @DisallowConcurrentExecution): an occurrence that falls due while
// another runs is claimed only after that run ended, or is skipped by the
// misfire policy then; a run whose node died holds the next ones up until
// its lease expired and the reaper returned it. With true, an occurrence
// starts at its time whatever runs.
func WithOverlap(allow bool) PeriodicOption {
	return PeriodicOption{apply: func(c *periodicConfig) { c.overlap = allow }}
}

// validPeriodicConfig checks the settings of a periodic task.
func validPeriodicConfig(what string, c periodicConfig) error {
	if c.misfire < MisfireCoalesce || c.misfire > MisfireRunEach {
		return invalid(what, "misfire policy %v unknown", c.misfire)
	}
	return nil
}

// luaMisfire holds the periodic rules the claim of an occurrence applies
// before claimScript's body (periodic_rules): the misfire policy for an
// occurrence that never failed, then the overlap. ARGV after the claim's
// five: policy ("coalesce", "skip" or "each"), "1" if overlap is allowed,
// the trigger's next time after the occurrence (µs, "" if none), the
// misfire threshold (µs), the retention (ms), the occurrence's due time
// (µs). It answers nil to go on with the claim, {4} when it skipped the
// occurrence (removed, with a done marker for the retention, and
// "claimed <id>" published so the other windows drop it), or {5, until,
// now} when the occurrence waits: for an earlier one (until = 0) or for
// the running one, whose lease runs to until (by Redis's clock, now).
const luaMisfire = `
-- occ_key orders occurrence IDs (name@RFC 3339 UTC) by due time
local function occ_key(id)
  local ts = string.match(id, '@([^@]*)$')
  if not ts then return nil end
  local sec, frac = string.match(ts, '^(%d+%-%d%d%-%d%dT%d%d:%d%d:%d%d)%.?(%d*)Z$')
  if not sec then return nil end
  return sec .. frac .. string.rep('0', 9 - #frac)
end
local function periodic_rules()
  local s = redis.call('ZSCORE', STATE.pending, ARGV[1])
  if not s or tonumber(s) > tonumber(ARGV[2]) then return nil end
  local t = now()
  if tonumber(s) > tonumber(t) then return nil end
  local f = redis.call('HMGET', TASK, 'kind', 'attempt', 'sum')
  if not f[1] or wrong_kind(f[1]) then return nil end
  if f[2] == '0' then
    if ARGV[6] == 'each' then
      local mine = occ_key(ARGV[1])
      local due = redis.call('ZRANGE', INDEX.pending, '-inf', t, 'BYSCORE', 'LIMIT', 0, 1000)
      for _, other in ipairs(due) do
        local k = occ_key(other)
        if mine and k and k < mine then return {5, '0', t} end
      end
    else
      local missed = ARGV[8] ~= '' and tonumber(ARGV[8]) <= tonumber(t)
      if ARGV[6] == 'skip' and tonumber(t) - tonumber(ARGV[11]) > tonumber(ARGV[9]) then missed = true end
      if missed then
        index_rem(INDEX, 'pending', ARGV[1])
        if f[3] then redis.call('SET', MARK, f[3], 'PX', ARGV[10]) end
        redis.call('DEL', TASK)
        publish_claimed(ARGV[5], ARGV[1])
        return {4}
      end
    end
  end
  if ARGV[7] ~= '1' then
    local r = redis.call('ZRANGE', INDEX.running, 0, 0, 'WITHSCORES')
    if #r > 0 then return {5, r[2], t} end
  end
  return nil
end
local verdict = periodic_rules()
if verdict then return verdict end
`

// periodicClaimScript claims an occurrence of a periodic task:
// claimScript with the periodic rules (luaMisfire) first. KEYS: as
// claimScript's. ARGV: claimScript's, then luaMisfire's.
var periodicClaimScript = redis.NewScript(luaNow + luaPublish + luaPart + luaMisfire + claimBody)
