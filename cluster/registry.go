package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The member registry: every started node keeps a record of itself in
// Redis (prefix:member:<id>, indexed by prefix:members), renewed with its
// membership every quarter lease and expiring a lease after its last
// renewal, so a node killed without a word leaves nothing behind for
// longer than a lease. Node.Members lists the live records. It is asynq's
// Inspector.Servers and River's producers table; Quartz keeps the same
// facts in QRTZ_SCHEDULER_STATE.
//
// The record and the claimers' set (prefix:nodes, the rendezvous hashing
// of ownership.go) use the same ID. A stopping node leaves the claimers' set
// at once but keeps its record, marked stopping, until it has stopped.

// Member is one live node as its record in Redis shows it.
type Member struct {
	// Name names the node (Node.Name): the stem of its claim tokens, the
	// name the rendezvous hashing of partitions uses, and the node of
	// RunRecord.Node and Info.Owner.
	Name string
	// Host and PID are the machine and the process the node runs in.
	Host string
	PID  int
	// Version is the version of the cluster module the node was built
	// with, as the Go toolchain recorded it ("(devel)" for a build of
	// the module itself or inside a workspace).
	Version string
	// Started is when the node started, by its own clock as Start read it
	// (not corrected by its offset from Redis's).
	Started time.Time
	// Heartbeat is when the node last renewed its record, and Expires
	// when the record goes unless renewed again, both by Redis's clock.
	Heartbeat, Expires time.Time
	// Concurrency is the node's number of workers (WithConcurrency).
	Concurrency int
	// Running counts the tasks the node held a claim on at its last
	// renewal; Windowed the tasks of its window (due within WithWindow,
	// waiting in memory), Waiting those of them already due and
	// waiting for a free worker or for their kind's limit
	// (WithKindConcurrency).
	Running, Windowed, Waiting int
	// Owned and BackedUp count the partitions the node owned and backed
	// up for at least one of its kinds at its last renewal (Stats).
	Owned, BackedUp int
	// Kinds are the kinds the node handles, sorted; a periodic task
	// declared with Node.Periodic appears as "@" + its name.
	Kinds []string
	// Stopping is true from the moment Stop or StopNow was called until
	// the node has stopped: it claims nothing more.
	Stopping bool
}

// memberPrefix and membersIndex name the records' keys and their index.
func (s store) memberPrefix() string { return s.keys().MemberPrefix() }
func (s store) membersIndex() string { return s.keys().Members() }

// moduleVersion is the version of this module in the running binary.
var moduleVersion = sync.OnceValue(func() string {
	const path = "github.com/go-stpe/scheduler/cluster"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == path {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "(devel)"
})

// hostName is the machine's name, or "" when the system does not tell.
var hostName = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

// recordLocked returns the fields of this node's record as they are now,
// except its heartbeat and expiry, which the script stamps. n.mu must be
// held.
func (n *Node) recordLocked() []any {
	kinds := n.handledKindsLocked()
	waiting := 0
	for _, e := range n.loaded {
		if e.ready {
			waiting++
		}
	}
	stopping := "0"
	if n.state != stateStarted {
		stopping = "1"
	}
	return []any{
		"host", hostName(),
		"pid", strconv.Itoa(os.Getpid()),
		"version", moduleVersion(),
		"started", strconv.FormatInt(n.started.UnixMicro(), 10),
		"concurrency", strconv.Itoa(n.cfg.concurrency),
		"running", strconv.Itoa(len(n.running)),
		"windowed", strconv.Itoa(len(n.loaded)),
		"waiting", strconv.Itoa(waiting),
		"owned", strconv.Itoa(n.shares.ownedPartitions()),
		"backed", strconv.Itoa(n.shares.backedPartitions()),
		// Kinds hold no white space (validKind).
		"kinds", strings.Join(kinds, " "),
		"stopping", stopping,
	}
}

// Members lists the live nodes of the prefix (those whose record has not
// expired), sorted by name, from any node, started or not. A node that was
// never started (one that only schedules) has no record.
func (n *Node) Members(ctx context.Context) ([]Member, error) {
	recs, err := n.st.records(ctx, n.st.membersIndex(), n.st.memberPrefix())
	if err != nil {
		return nil, failed("members", err)
	}
	out := make([]Member, 0, len(recs))
	for id, f := range recs {
		out = append(out, memberFromHash(id, f))
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// memberFromHash reads a record's fields; a field that does not parse is
// left zero.
func memberFromHash(id string, f map[string]string) Member {
	m := Member{
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
	return m
}

// atoi is strconv.Atoi with 0 for a field that does not parse.
func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// timeField reads a time the store wrote (µs since the epoch); the zero Time
// for a field that is missing or does not parse.
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

// records reads the live records of an index, each under keyPrefix + its
// name, in two round trips: the names (redisdriver.ListRecordsScript), then their
// hashes; a name whose hash is gone meanwhile is left out.
func (s store) records(ctx context.Context, index, keyPrefix string) (map[string]map[string]string, error) {
	names, err := redisdriver.ListRecordsScript.Run(ctx, s.rdb, []string{index}).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(names))
	if len(names) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
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
