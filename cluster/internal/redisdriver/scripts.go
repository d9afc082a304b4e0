package redisdriver

import (
	"context"
	"embed"
	"maps"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every Lua script of the store, each the concatenation of files of lua/:
// a script's own file after the shared definitions it uses (lua/lib).
// Each script runs atomically in Redis, so no two nodes ever see a
// half-made change. scripts_test.go pins every script's SHA-1, so that
// no script changes unnoticed. During a rolling deploy nodes of two
// versions run side by side, each its own scripts (EVALSHA names a script
// by its SHA-1), on the same data: a script may change only if the data
// it reads and writes keeps its shape (the same keys, fields, scores and
// messages, meaning the same). A change of that shape is a change of the
// layout version (LayoutVersion), and then old and new nodes must not
// share a keyspace.

//go:embed lua
var luaFiles embed.FS

// script is the script made of files, in order.
func script(files ...string) *redis.Script { return redis.NewScript(Source(files...)) }

// Source is the text of the files of lua/, in order: a script's source,
// or shared definitions a test runs with a script of its own.
func Source(files ...string) string {
	var b strings.Builder
	for _, f := range files {
		src, err := luaFiles.ReadFile("lua/" + f)
		if err != nil {
			panic("redisdriver: the script file " + f + " is not embedded")
		}
		b.Write(src)
	}
	return b.String()
}

// BulkScript applies an action to those of the tasks given that are still
// in a state (of a kind, before a time). Per task it does what retryScript,
// deleteScript or moveScript (run now) does; a task that moved on is left
// as it is. KEYS: the partition's fixed keys, then five per task (see
// lua/lib/part.lua). ARGV: action ("retry", "delete" or "runnow"), state, kind or
// "", time (µs, exclusive) or "", channel, then the tasks' IDs. Returns
// {changed, left because their kind is not the one given, entries without
// their task dropped, Redis's time, left unchanged though still in the
// state's set or the kind's index of it (a task whose sets disagree),
// where a next read would find it again}.
var BulkScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "bulk.lua")

// BulkCancelScript is Cancel's script run on a task only if it is still
// in a state (of a kind, before a time): the check CancelAll adds. KEYS:
// the task's keys (Partition.TaskKeys). ARGV: Cancel's five, then the
// state, the time (µs, exclusive) or "", the kind or "". Returns Cancel's
// {removed, was leased}, then 1 if it dropped an entry left without its
// task, and 1 if it left the task though it is still in the state's set
// or the kind's index of it (its sets disagree).
var BulkCancelScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/history.lua", "lib/keepdone.lua", "bulk_cancel.lua", "lib/cancel.lua")

// CancelScript removes a task in any state, with its index entries; for a
// periodic occurrence (kind "@...") it leaves the done marker, so that no
// node stores the occurrence again. With WithKeepDone the task is kept as
// a done record whose last run record says canceled (a done record itself
// is removed). KEYS: the task's keys (Partition.TaskKeys). ARGV: id,
// retention (ms), channel, keep age (µs), keep max (0: none kept). Returns
// {removed, was leased}, each 0 or 1.
var CancelScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/history.lua", "lib/keepdone.lua", "lib/cancel.lua")

// ClaimScript moves a due task from pending to leased, for one owner,
// stamps the claim's start (field "start", for the run history) and
// remembers its pending score (field "next") for a hand-back.
// KEYS: the task's keys (Partition.TaskKeys). ARGV: id, expected due,
// lease (µs), owner token, channel, then "1" if the claimer hears the
// channel itself, else "0". A won claim publishes "claimed <id>", so that
// the other nodes drop the task from their windows without claiming it in
// vain; not when the claimer is the channel's one listener on the server. A task of a paused kind is never claimed: it is not
// in the pending set (pause.go), and the script checks the kind again.
// Returns {0} if the task is not pending (claimed elsewhere, canceled, done
// or paused), {2, score, kind} if it is pending for a later time than
// expected, {3, score, kind, now} if it is not due yet by Redis's clock, or
// {1, kind, payload, due, attempt, lost, metadata} once claimed.
var ClaimScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/claim.lua")

// CompleteScript records a successful run: a done record with
// WithKeepDone (the reaper trims the records past the bounds), else the
// task is removed; either way a done marker is left when the caller chose
// its ID. Without a done record it writes no run history and reads no
// clock: the task is deleted. KEYS: the task's keys (Partition.TaskKeys),
// then the minute's timeline hash if the run is counted
// (timeline_record.go). ARGV: id, owner token, retention (ms), keep age
// (µs), keep max (0: none kept), the timeline hash's time to live (ms).
// Returns "done", or "lost" if the owner no longer holds the task.
var CompleteScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/history.lua", "lib/keepdone.lua", "lib/timeline.lua", "complete.lua")

// CountsScript counts a partition's tasks by state, in total and for
// each kind given, at one instant. KEYS: the partition's pending, lease,
// dead and done sets, its paused set, then the four indexes (pending,
// running, dead, done) of each kind given. ARGV: the kinds. Returns {"ok",
// {pending, running, dead, done, then for each kind its four counts and
// 1 if it is paused, else 0}}; or {"paused", kinds} if a paused kind of
// the partition is not among those given (the pending tasks of a paused
// kind are only in its index).
//
// A state's set holds exactly the tasks of its kinds' indexes (the pending
// set those of the kinds not paused), so once every task of a state is
// counted, the indexes of that state of the kinds left are not read: they
// are empty. A partition whose tasks are all pending reads one index per
// kind, not four.
var CountsScript = script("lib/pausedgiven.lua", "counts.lua")

// DeleteScript removes a dead task or a done record. KEYS: taskKeys. ARGV:
// id.
var DeleteScript = script("lib/publish.lua", "lib/part.lua", "lib/storedkind.lua", "delete.lua")

// ExpiredScript lists up to a limit of the tasks of a partition whose
// lease expired by Redis's clock. KEYS: the partition's lease set. ARGV:
// limit.
var ExpiredScript = script("lib/now.lua", "expired.lua")

// ExtendScript pushes back the lease of the tasks an owner still holds
// in one partition, in the lease set and in each kind's running index.
// KEYS: the partition's lease set, then for each task its hash and its
// kind's running index. ARGV: lease (µs), then the tasks' id, token pairs
// in the same order. Returns the IDs whose lease is lost.
var ExtendScript = script("lib/now.lua", "extend.lua")

// FailScript records a failed run: back to pending for a retry at Redis's
// time plus the backoff, or dead. KEYS: the task's keys
// (Partition.TaskKeys), then the minute's timeline hash if the run is
// counted. ARGV: id, owner token, error, backoff (µs), channel, "1" to
// make it dead at once (ErrSkipRetry), outcome (failed or timed out), the
// timeline hash's time to live (ms). Returns "retry", "dead", or "lost" if
// the owner no longer holds the task.
var FailScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/history.lua", "lib/timeline.lua", "fail.lua")

// ForgetKindScript drops kind from a partition's set of kinds if the
// partition has no task of it left and has it not paused. KEYS: the
// partition's kinds and paused sets, then the kind's four indexes. ARGV:
// kind.
var ForgetKindScript = script("forget.lua")

// GetScript reads a task and where it is. KEYS: the partition's pending,
// lease, dead and done sets, its paused set, the task. ARGV: id. Returns
// {} if there is no such task, else {state, paused (0 or 1), score in the
// pending set or "", field, value, ...}. A stored task in none of the sets
// is between two steps of an earlier version's scripts, or pending of a
// paused kind (in its kind's index only): it is pending.
var GetScript = script("get.lua")

// LayoutScript checks the layout record and writes it if there is none,
// unless the keyspace holds tasks in the old single-slot layout.
// KEYS: the layout record, then the old layout's keys that hold tasks: its
// pending, lease, dead and done sets and the pending index of each kind it
// names (a paused kind's pending tasks sit there alone). ARGV: version,
// partitions. Returns {"ok", ""}, {"created", ""}, {"old", the first old
// key that holds tasks}, {"stray", that key} if there is a record too (a
// node of an earlier version wrote into the keyspace after its migration), {"version", the recorded version} or
// {"partitions", the recorded number}.
var LayoutScript = script("layout.lua")

// MembersScript renews a node's record (and, for a claimer, its place in
// the claimers' set, prefix:nodes, and its kinds in prefix:nodekinds) and
// its periodic declarations, drops the expired entries of the indexes,
// and returns Redis's time (µs), whether this node joined or left the
// claimers ("1" or "0": the caller announces it), and, for each live
// claimer, its ID and its kinds. With a zero time to live it removes the
// node's membership and record instead.
// KEYS: nodes, members, periodic, nodekinds, the node's record, then the
// declared periodic tasks' records. ARGV: id, time to live (µs), "1" for
// a claimer, the node's kinds, the number of record fields and values
// that follow, those fields and values, then name, trigger, next due (µs
// or "") triples, in the order of their keys.
var MembersScript = script("lib/now.lua", "members.lua")

// MoveScript sets when a pending task runs next; a task of a paused kind
// keeps waiting, at its new time. KEYS: taskKeys. ARGV: id, new time (µs,
// or "now" for Redis's clock), "1" to set the task's due time too,
// channel.
var MoveScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/storedkind.lua", "move.lua")

// PageScript returns a page of a partition's sorted set after a (score,
// member) position, as {"ok", {member, score, ...}}. It finds the position
// by a binary search over ranks among the members with the cursor's score
// (Redis orders them by member), so the cursor's task need not be in the
// set any more. Listing every pending task, it merges in the pending index
// of each paused kind, whose tasks are not in the pending set; if the
// partition's paused kinds are not those given, it answers {"paused",
// kinds}. KEYS: the set, and to merge the paused kinds the partition's
// paused set and the pending index of each kind given. ARGV: "asc" or
// "desc", "1" for the first page, cursor score, cursor member, limit, "1"
// to merge the paused kinds, the kinds given.
var PageScript = script("lib/pausedgiven.lua", "page.lua")

// PauseScript pauses a kind in a partition: it takes the kind's pending
// tasks out of the pending set, a chunk of ids per command. KEYS: the
// partition's pending set, its paused set, the kind's pending index. ARGV:
// kind. Returns 1, or 0 if the kind was paused already.
var PauseScript = script("pause.lua")

// PeriodicClaimScript claims an occurrence of a periodic task:
// ClaimScript with the periodic rules (lua/lib/misfire.lua) first. KEYS: as
// ClaimScript's. ARGV: ClaimScript's but the last, then those of
// lua/lib/misfire.lua, then ClaimScript's last.
var PeriodicClaimScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/misfire.lua", "lib/claim.lua")

// CursorScript writes a periodic task's settings to its cursor and moves
// the cursor forward to the occurrence stored, never back. KEYS: the
// cursor. ARGV: the latest occurrence stored (µs, "" for none), misfire
// policy, "1" if overlap is allowed.
var CursorScript = script("periodic_cursor.lua")

// PeriodicRunScript records the last run of a declared periodic task; a
// declaration that expired meanwhile is not written back. KEYS: the
// declaration. ARGV: node, due, started, ended, outcome, error. Returns 1
// if recorded.
var PeriodicRunScript = script("periodic_run.lua")

// ReapScript returns tasks of one partition whose lease expired to
// pending, due now (Redis time: they were due when claimed), counting the
// lost run in the task's "lost" field and its history, not as a failed
// attempt; past the limit of lost runs they go dead. It checks each lease
// again, so a task renewed or reaped since expiredScript listed it is left
// alone. KEYS: the partition's fixed keys, then five per task (see
// lua/lib/part.lua), then the minute's timeline hash if lost runs are counted
// (timeline_record.go). ARGV: channel, max lost runs, the timeline hash's
// time to live (ms), then the tasks' IDs. Returns the lost runs, an ID
// then "pending" or "dead" for each (a stale lease of a task gone is
// removed, and is no lost run).
var ReapScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/history.lua", "lib/timeline.lua", "reap.lua")

// ListRecordsScript reads the live names of an index: those whose score
// (their expiry, µs) is still ahead of Redis's clock. KEYS: index.
var ListRecordsScript = script("lib/now.lua", "records.lua")

// ReleaseScript hands a claimed task back to pending without counting an
// attempt. It keeps the time the task was pending for (field "next", set
// by the claim), so a task handed back never runs before its due time.
// KEYS: the task's keys (Partition.TaskKeys). ARGV: id, owner token,
// channel. Returns "released", or "lost" if the owner no longer holds the
// task.
var ReleaseScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/history.lua", "release.lua")

// RemoveDoneScript removes done records of one partition, each with its
// index entry, unless it left the done set meanwhile. KEYS: the
// partition's fixed keys, then five per record (see lua/lib/part.lua). ARGV: the
// records' IDs. Returns how many it removed.
var RemoveDoneScript = script("lib/publish.lua", "lib/part.lua", "remove_done.lua")

// ResumeScript resumes a kind in a partition: it puts the kind's pending
// tasks back into the pending set, at the times they are pending for, and
// publishes "resumed <kind>". KEYS: as pauseScript's. ARGV: kind, the
// partition's channel. Returns 1, or 0 if the kind was not paused.
var ResumeScript = script("resume.lua")

// RetryScript moves a dead task back to pending, due at once by Redis's
// clock, with its counts of failed and lost runs reset. KEYS: taskKeys.
// ARGV: id, channel.
var RetryScript = script("lib/now.lua", "lib/publish.lua", "lib/part.lua", "lib/storedkind.lua", "retry.lua")

// ScheduleScript stores a task unless its ID is taken, and indexes it by
// kind. A done record (WithKeepDone) whose done marker is gone does not
// hold its ID: it is replaced, unless it is of another kind (a conflict,
// until the record is trimmed or deleted).
// KEYS: the task's keys (Partition.TaskKeys). ARGV: id, kind, payload,
// due, max retries, fixed ("1" when the caller chose the ID), channel, the
// observer's metadata ("" for none; not part of the checksum).
// Returns "created", "exists" (the same task is stored), "done" (the same
// task already ran, or was canceled if it is a periodic occurrence) or
// "conflict" (the ID holds a different task).
var ScheduleScript = script("lib/publish.lua", "lib/part.lua", "lib/storetask.lua", "schedule.lua")

// ScheduleManyScript stores the tasks of one partition, each as
// scheduleScript would, makes the created ones pending with one ZADD per
// set, and announces them all in one message (notices.go), leaving out
// those of a paused kind.
// KEYS: the partition's fixed keys, the four indexes of each of the
// batch's kinds, then per task its hash and, if its ID is fixed, its done
// marker. ARGV:
// the channel, the number of kinds and their names, then seven per task:
// id, its kind's number (from 1), payload, due, max retries, fixed, the
// observer's metadata. Returns scheduleScript's answer for each task, in
// order.
var ScheduleManyScript = script("lib/publish.lua", "lib/part.lua", "lib/storetask.lua", "schedule_many.lua")

// scriptNames names every script by its SHA-1, as Redis shows it
// (EVALSHA's first argument in SLOWLOG, MONITOR and CLIENT LIST).
var scriptNames = map[string]string{
	BulkScript.Hash():          "bulk",
	BulkCancelScript.Hash():    "bulk cancel",
	CancelScript.Hash():        "cancel",
	ClaimScript.Hash():         "claim",
	CompleteScript.Hash():      "complete",
	CountsScript.Hash():        "counts",
	DeleteScript.Hash():        "delete",
	ExpiredScript.Hash():       "expired",
	ExtendScript.Hash():        "extend",
	FailScript.Hash():          "fail",
	ForgetKindScript.Hash():    "forget",
	GetScript.Hash():           "get",
	LayoutScript.Hash():        "layout",
	MembersScript.Hash():       "members",
	MoveScript.Hash():          "move",
	PageScript.Hash():          "page",
	PauseScript.Hash():         "pause",
	PeriodicClaimScript.Hash(): "periodic claim",
	CursorScript.Hash():        "periodic cursor",
	PeriodicRunScript.Hash():   "periodic run",
	ReapScript.Hash():          "reap",
	ListRecordsScript.Hash():   "records",
	ReleaseScript.Hash():       "release",
	RemoveDoneScript.Hash():    "remove done",
	ResumeScript.Hash():        "resume",
	RetryScript.Hash():         "retry",
	ScheduleScript.Hash():      "schedule",
	ScheduleManyScript.Hash():  "schedule many",
}

// ScriptNames names every script of the store by its SHA-1; the map is a
// copy.
func ScriptNames() map[string]string { return maps.Clone(scriptNames) }

// ScriptName names the script of SHA-1 sha; "script" if it is none of the
// store's.
func ScriptName(sha string) string {
	if name, ok := scriptNames[sha]; ok {
		return name
	}
	return "script"
}

// LoadScripts puts every script in Redis's script cache, so that the
// first call of each is one round trip (EVALSHA) like every later one.
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	for _, sc := range lifecycleScripts {
		if err := sc.Load(ctx, rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}

// lifecycleScripts are the scripts a node runs on every task, loaded at
// Start.
var lifecycleScripts = []*redis.Script{ScheduleScript, ClaimScript, ExtendScript,
	CompleteScript, FailScript, ReleaseScript, ExpiredScript, ReapScript, CancelScript,
	MembersScript, RemoveDoneScript}
