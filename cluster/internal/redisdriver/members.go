package redisdriver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Membership: every started node renews, every quarter lease, its place
// among the claimers (prefix:nodes, scored by expiry) with the kinds it
// handles (prefix:nodekinds), its record (prefix:member:<name>, indexed
// by prefix:members) and its periodic declarations
// (prefix:periodic:<name>, indexed by prefix:periodic), in one script
// (MembersScript) that also returns the live claimers. The records expire
// a lease after their last renewal, so a node killed without a word leaves
// nothing behind for longer than a lease.

// Renew renews r.Node's membership, record and declarations in one
// script, and returns the live claimers (driver.Coordination).
func (d *Driver) Renew(ctx context.Context, r driver.Renewal) (driver.Membership, error) {
	c := "0"
	if r.Claimer {
		c = "1"
	}
	var rec []any
	if r.TTL > 0 {
		rec = memberFields(r.Record)
	}
	k := d.keys
	keys := make([]string, 0, 5+len(r.Periodic))
	keys = append(keys, k.Nodes(), k.Members(), k.Periodic(), k.NodeKinds(), k.MemberPrefix()+r.Node)
	args := make([]any, 0, 5+len(rec)+3*len(r.Periodic))
	args = append(args, r.Node, r.TTL.Microseconds(), c, strings.Join(r.Kinds, " "), len(rec))
	args = append(args, rec...)
	for _, p := range r.Periodic {
		keys = append(keys, k.PeriodicPrefix()+p.Name)
		args = append(args, p.Name, p.Trigger, microsText(p.Next))
	}
	vals, err := MembersScript.Run(ctx, d.rdb, keys, args...).StringSlice()
	if err != nil {
		return driver.Membership{}, err
	}
	if len(vals) < 2 {
		return driver.Membership{}, errors.New("membership: short reply")
	}
	now, err := parseMicros(vals[0])
	if err != nil {
		return driver.Membership{}, err
	}
	m := driver.Membership{Now: time.UnixMicro(now), Changed: vals[1] == "1"}
	for i := 2; i+1 < len(vals); i += 2 {
		m.Live = append(m.Live, driver.LiveNode{Name: vals[i], Kinds: strings.Fields(vals[i+1])})
	}
	return m, nil
}

// memberFields are the fields of a member record but its heartbeat and
// expiry, which the script stamps.
func memberFields(m driver.Member) []any {
	stopping := "0"
	if m.Stopping {
		stopping = "1"
	}
	return []any{
		"host", m.Host,
		"pid", strconv.Itoa(m.PID),
		"version", m.Version,
		"started", strconv.FormatInt(m.Started.UnixMicro(), 10),
		"concurrency", strconv.Itoa(m.Concurrency),
		"running", strconv.Itoa(m.Running),
		"windowed", strconv.Itoa(m.Windowed),
		"waiting", strconv.Itoa(m.Waiting),
		"owned", strconv.Itoa(m.Owned),
		"backed", strconv.Itoa(m.BackedUp),
		// Kinds hold no white space (the cluster's validKind).
		"kinds", strings.Join(m.Kinds, " "),
		"stopping", stopping,
	}
}

// Members reads the live member records (driver.Coordination).
func (d *Driver) Members(ctx context.Context) ([]driver.Member, error) {
	recs, err := d.records(ctx, d.keys.Members(), d.keys.MemberPrefix())
	if err != nil {
		return nil, err
	}
	out := make([]driver.Member, 0, len(recs))
	for id, f := range recs {
		out = append(out, memberOf(id, f))
	}
	return out, nil
}

// memberOf reads a record's fields; a field that does not parse is left
// zero.
func memberOf(id string, f map[string]string) driver.Member {
	return driver.Member{
		Name:        id,
		Host:        f["host"],
		PID:         atoi(f["pid"]),
		Version:     f["version"],
		Started:     timeField(f["started"]),
		Heartbeat:   timeField(f["heartbeat"]),
		Expires:     timeField(f["expires"]),
		Concurrency: atoi(f["concurrency"]),
		Running:     atoi(f["running"]),
		Windowed:    atoi(f["windowed"]),
		Waiting:     atoi(f["waiting"]),
		Owned:       atoi(f["owned"]),
		BackedUp:    atoi(f["backed"]),
		Kinds:       strings.Fields(f["kinds"]),
		Stopping:    f["stopping"] == "1",
	}
}

// records reads the live records of an index, each under keyPrefix + its
// name, in two round trips: the names (ListRecordsScript), then their
// hashes; a name whose hash is gone meanwhile is left out.
func (d *Driver) records(ctx context.Context, index, keyPrefix string) (map[string]map[string]string, error) {
	names, err := ListRecordsScript.Run(ctx, d.rdb, []string{index}).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(names))
	if len(names) == 0 {
		return out, nil
	}
	pipe := d.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(names))
	for i, name := range names {
		cmds[i] = pipe.HGetAll(ctx, keyPrefix+name)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	for i, name := range names {
		if f := cmds[i].Val(); len(f) > 0 {
			out[name] = f
		}
	}
	return out, nil
}

// atoi is strconv.Atoi with 0 for a field that does not parse.
func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// timeField reads a time the store wrote (µs since the epoch); the zero
// Time for a field that is missing or does not parse.
func timeField(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	us, err := parseMicros(s)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// microsText writes t in the store's unit, "" for the zero Time.
func microsText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMicro(), 10)
}

// boolText writes b as the scripts read it: "1" or "0".
func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
