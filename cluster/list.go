package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Listing tasks by state, a page at a time: Node.List. It is asynq's
// Inspector.ListPendingTasks, ListActiveTasks and ListArchivedTasks, and
// River's JobList with a state filter and its cursor.

// MaxPage is the largest page Node.List returns.
const MaxPage = 1000

// Page is one page of a listing.
type Page struct {
	// Tasks are the page's tasks, in the listing's order.
	Tasks []Info
	// Next is the cursor of the following page, or "" after the last.
	Next string
}

// List returns up to limit tasks in state, after cursor ("" for the first
// page). Pending tasks come soonest first (by the time they are to run
// next), running ones by the expiry of their lease, soonest first, and
// dead ones newest first (by the time they died); tasks with the same time
// are ordered by ID. The cursor names the last task of a page by its time
// and ID, so a task that stays in the state while the listing goes on is
// listed exactly once, whatever is added or removed around it; a task that
// changes state or time meanwhile may be missed or seen twice. A page costs
// O(log² n + limit) in Redis, whatever the number of tasks.
//
// A state other than Pending, Running and Dead, a limit outside 1 to
// MaxPage, or a cursor that is not one List returned for that state is an
// error wrapping scheduler.ErrInvalidArgument.
func (n *Node) List(ctx context.Context, state State, cursor string, limit int) (Page, error) {
	what := "list " + string(state)
	var key string
	desc := false
	switch state {
	case Pending:
		key = n.st.pending()
	case Running:
		key = n.st.lease()
	case Dead:
		key, desc = n.st.dead(), true
	default:
		return Page{}, invalid("list", "unknown state %q: want pending, running or dead", state)
	}
	if limit < 1 || limit > MaxPage {
		return Page{}, invalid(what, "page size %d: want 1 to %d", limit, MaxPage)
	}
	score, member, err := decodeCursor(state, cursor)
	if err != nil {
		return Page{}, err
	}
	order := "asc"
	if desc {
		order = "desc"
	}
	first := "1"
	if cursor != "" {
		first = "0"
	}
	vals, err := pageScript.Run(ctx, n.st.rdb, []string{key}, order, first, score, member, limit).StringSlice()
	if err != nil {
		return Page{}, failed(what, err)
	}
	ids := make([]string, 0, len(vals)/2)
	for i := 0; i+1 < len(vals); i += 2 {
		ids = append(ids, vals[i])
	}
	infos, err := n.st.infos(ctx, ids)
	if err != nil {
		return Page{}, failed(what, err)
	}
	page := Page{Tasks: make([]Info, 0, len(ids))}
	for _, id := range ids {
		if info, ok := infos[id]; ok {
			info.State = state
			page.Tasks = append(page.Tasks, info)
		}
	}
	if len(ids) == limit {
		page.Next = encodeCursor(state, vals[len(vals)-1], ids[len(ids)-1])
	}
	return page, nil
}

// pageScript returns a page of a sorted set after a (score, member)
// position, as {member, score, ...}. It finds the position by a binary
// search over ranks among the members with the cursor's score (Redis orders
// them by member), so the cursor's task need not be in the set any more.
// KEYS: the set. ARGV: "asc" or "desc", "1" for the first page, cursor
// score, cursor member, limit.
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
local start = 0
if ARGV[2] ~= '1' then
  local s, m = ARGV[3], ARGV[4]
  local lo, hi
  if asc then
    lo = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. s)
    hi = redis.call('ZCOUNT', KEYS[1], '-inf', s)
  else
    lo = redis.call('ZCOUNT', KEYS[1], '(' .. s, '+inf')
    hi = redis.call('ZCOUNT', KEYS[1], s, '+inf')
  end
  -- the first rank in [lo, hi) whose member comes after m in this order
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = redis.call(range, KEYS[1], mid, mid)[1]
    local after
    if asc then after = before(m, x) else after = before(x, m) end
    if after then hi = mid else lo = mid + 1 end
  end
  start = lo
end
return redis.call(range, KEYS[1], start, start + limit - 1, 'WITHSCORES')
`)

// encodeCursor names the position after member, at score, in state.
func encodeCursor(state State, score, member string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(string(state) + "\x00" + score + "\x00" + member))
}

// decodeCursor reads a cursor of state; "" is the first page.
func decodeCursor(state State, cursor string) (score, member string, err error) {
	if cursor == "" {
		return "", "", nil
	}
	bad := func(why string) error {
		return invalid("list "+string(state), "malformed cursor %q: %s", cursor, why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", "", bad("not one List returned")
	}
	parts := strings.SplitN(string(raw), "\x00", 3)
	if len(parts) != 3 || parts[2] == "" {
		return "", "", bad("not one List returned")
	}
	if State(parts[0]) != state {
		return "", "", bad("it lists " + parts[0])
	}
	if _, err := strconv.ParseInt(parts[1], 10, 64); err != nil {
		return "", "", bad("bad position")
	}
	return parts[1], parts[2], nil
}

// infos reads the stored tasks ids in one round trip; a task removed
// meanwhile is left out.
func (s store) infos(ctx context.Context, ids []string) (map[string]Info, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.task(id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make(map[string]Info, len(ids))
	for i, id := range ids {
		if f := cmds[i].Val(); len(f) > 0 {
			out[id] = infoFromHash(id, f)
		}
	}
	return out, nil
}

// infoFromHash reads a task's hash; the state is the caller's to set.
func infoFromHash(id string, f map[string]string) Info {
	var info Info
	due, _ := parseMicros(f["due"])
	info.ID = id
	info.Kind = f["kind"]
	info.Payload = []byte(f["payload"])
	info.Due = time.UnixMicro(due)
	info.Attempt, _ = strconv.Atoi(f["attempt"])
	info.Lost, _ = strconv.Atoi(f["lost"])
	info.MaxRetries, _ = strconv.Atoi(f["max"])
	info.LastError = f["err"]
	return info
}
