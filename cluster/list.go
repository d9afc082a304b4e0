package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Listing tasks by state and kind, a page at a time: Node.List. It is
// asynq's Inspector.ListPendingTasks, ListActiveTasks, ListArchivedTasks
// and ListCompletedTasks, and River's JobList with its state and kind
// filters and its cursor.

// MaxPage is the largest page Node.List returns.
const MaxPage = 1000

// ListQuery selects what Node.List returns.
type ListQuery struct {
	// State is the state listed: Pending, Running, Dead or Done.
	State State
	// Kind, if not "", lists only the tasks of that kind.
	Kind string
	// Cursor is "" for the first page, else the Next of the page before,
	// from a query of the same State and Kind.
	Cursor string
	// Limit is the page size, 1 to MaxPage.
	Limit int
}

// Page is one page of a listing.
type Page struct {
	// Tasks are the page's tasks, in the listing's order.
	Tasks []Info
	// Next is the cursor of the following page, or "" after the last.
	Next string
}

// List returns up to q.Limit tasks in q.State (of q.Kind, if given), after
// q.Cursor. Pending tasks come soonest first (by the time they are to run
// next; those of a paused kind too), running ones by the expiry of their
// lease, soonest first, and dead and done ones newest first (by the time
// they died or finished); tasks with the same time are ordered by ID. The
// cursor names the last task of a page by its time and ID, so a task that
// stays in the state while the listing goes on is listed exactly once,
// whatever is added or removed around it; a task that changes state or time
// meanwhile may be missed or seen twice. A page costs O(log² n + limit) in
// Redis, n the number of tasks in the state (of the kind, when one is
// given: one sorted set per kind and state holds them), whatever the number
// of other tasks; listing every pending task adds that cost once per
// paused kind.
//
// A state other than Pending, Running, Dead and Done, a kind that is not
// valid (see Node.Handle), a limit outside 1 to MaxPage, or a cursor that
// is not one List returned for that state and kind is an error wrapping
// scheduler.ErrInvalidArgument.
func (n *Node) List(ctx context.Context, q ListQuery) (Page, error) {
	what := "list " + string(q.State)
	if q.Kind != "" {
		what += " " + q.Kind
	}
	if err := validState("list", q.State); err != nil {
		return Page{}, err
	}
	key := n.st.stateSet(q.State)
	if q.Kind != "" {
		if err := validKind(q.Kind); err != nil {
			return Page{}, err
		}
		key = n.st.kindIndex(q.State, q.Kind)
	}
	if q.Limit < 1 || q.Limit > MaxPage {
		return Page{}, invalid(what, "page size %d: want 1 to %d", q.Limit, MaxPage)
	}
	score, member, err := decodeCursor(what, q.State, q.Kind, q.Cursor)
	if err != nil {
		return Page{}, err
	}
	order := "asc"
	if q.State == Dead || q.State == Done {
		order = "desc"
	}
	first := "1"
	if q.Cursor != "" {
		first = "0"
	}
	mergePaused := "0"
	if q.State == Pending && q.Kind == "" {
		mergePaused = "1"
	}
	vals, err := pageScript.Run(ctx, n.st.rdb, []string{key}, order, first, score, member, q.Limit,
		n.st.prefix, mergePaused).StringSlice()
	if err != nil {
		return Page{}, failed(what, err)
	}
	ids := make([]string, 0, len(vals)/2)
	for i := 0; i+1 < len(vals); i += 2 {
		ids = append(ids, vals[i])
	}
	infos, err := n.st.infos(ctx, ids, q.State)
	if err != nil {
		return Page{}, failed(what, err)
	}
	page := Page{Tasks: make([]Info, 0, len(ids))}
	for _, id := range ids {
		if info, ok := infos[id]; ok {
			page.Tasks = append(page.Tasks, info)
		}
	}
	if len(ids) == q.Limit {
		page.Next = encodeCursor(q.State, q.Kind, vals[len(vals)-1], ids[len(ids)-1])
	}
	return page, nil
}

// pageScript returns a page of a sorted set after a (score, member)
// position, as {member, score, ...}. It finds the position by a binary
// search over ranks among the members with the cursor's score (Redis orders
// them by member), so the cursor's task need not be in the set any more.
// Listing every pending task, it merges in the pending index of each paused
// kind, whose tasks are not in the pending set. KEYS: the set. ARGV: "asc"
// or "desc", "1" for the first page, cursor score, cursor member, limit,
// prefix, "1" to merge the paused kinds.
var pageScript = redis.NewScript(`
-- bytewise order, as Redis orders members of one score (Lua's < follows
-- the server's locale)
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local asc = ARGV[1] == 'asc'
local limit = tonumber(ARGV[5])
local range = 'ZRANGE'
if not asc then range = 'ZREVRANGE' end
-- the rank in key of the first member after the cursor
local function start_of(key)
  if ARGV[2] == '1' then return 0 end
  local s, m = ARGV[3], ARGV[4]
  local lo, hi
  if asc then
    lo = redis.call('ZCOUNT', key, '-inf', '(' .. s)
    hi = redis.call('ZCOUNT', key, '-inf', s)
  else
    lo = redis.call('ZCOUNT', key, '(' .. s, '+inf')
    hi = redis.call('ZCOUNT', key, s, '+inf')
  end
  -- the first rank in [lo, hi) whose member comes after m in this order
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = redis.call(range, key, mid, mid)[1]
    local after
    if asc then after = before(m, x) else after = before(x, m) end
    if after then hi = mid else lo = mid + 1 end
  end
  return lo
end
local keys = {KEYS[1]}
if ARGV[7] == '1' then
  for _, kind in ipairs(redis.call('SMEMBERS', ARGV[6] .. ':paused')) do
    keys[#keys + 1] = ARGV[6] .. ':k:pending:' .. kind
  end
end
if #keys == 1 then
  local start = start_of(KEYS[1])
  return redis.call(range, KEYS[1], start, start + limit - 1, 'WITHSCORES')
end
local all = {}
for _, key in ipairs(keys) do
  local start = start_of(key)
  local r = redis.call(range, key, start, start + limit - 1, 'WITHSCORES')
  for i = 1, #r, 2 do all[#all + 1] = {r[i], r[i + 1]} end
end
table.sort(all, function(x, y)
  local a, b = tonumber(x[2]), tonumber(y[2])
  if a ~= b then
    if asc then return a < b end
    return a > b
  end
  if asc then return before(x[1], y[1]) end
  return before(y[1], x[1])
end)
local out = {}
for i = 1, math.min(limit, #all) do
  out[#out + 1] = all[i][1]
  out[#out + 1] = all[i][2]
end
return out
`)

// encodeCursor names the position after member, at score, in a listing
// of state and kind.
func encodeCursor(state State, kind, score, member string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(string(state) + "\x00" + kind + "\x00" + score + "\x00" + member))
}

// decodeCursor reads a cursor of a listing of state and kind; "" is the
// first page.
func decodeCursor(what string, state State, kind, cursor string) (score, member string, err error) {
	if cursor == "" {
		return "", "", nil
	}
	bad := func(why string) error {
		return invalid(what, "malformed cursor %q: %s", cursor, why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", "", bad("not one List returned")
	}
	parts := strings.SplitN(string(raw), "\x00", 4)
	if len(parts) != 4 || parts[3] == "" {
		return "", "", bad("not one List returned")
	}
	if State(parts[0]) != state || parts[1] != kind {
		return "", "", bad(fmt.Sprintf("it lists state %q, kind %q", parts[0], parts[1]))
	}
	if _, err := strconv.ParseInt(parts[2], 10, 64); err != nil {
		return "", "", bad("bad position")
	}
	return parts[2], parts[3], nil
}

// infos reads the stored tasks ids, found in state, and the paused kinds,
// in one round trip; a task removed meanwhile is left out.
func (s store) infos(ctx context.Context, ids []string, state State) (map[string]Info, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.task(id))
	}
	paused := pipe.SMembersMap(ctx, s.paused())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make(map[string]Info, len(ids))
	for i, id := range ids {
		if f := cmds[i].Val(); len(f) > 0 {
			_, isPaused := paused.Val()[f["kind"]]
			out[id] = infoFromHash(id, state, isPaused, f)
		}
	}
	return out, nil
}
