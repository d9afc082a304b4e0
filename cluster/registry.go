package cluster

import (
	"context"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The member registry: every started node keeps a record of itself in
// the store (driver.Coordination's Renew and Members), renewed with its
// membership every quarter lease and expiring a lease after its last
// renewal, so a node killed without a word leaves nothing behind for
// longer than a lease. Node.Members lists the live records. It is asynq's
// Inspector.Servers and River's producers table; Quartz keeps the same
// facts in QRTZ_SCHEDULER_STATE.
//
// The record and the live claimers (the rendezvous hashing of
// ownership.go) use the same name. A stopping node leaves the claimers' set
// at once but keeps its record, marked stopping, until it has stopped.

// Member is one live node as its record in the store shows it (see
// driver.Member for its fields).
type Member = driver.Member

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

// recordLocked returns this node's record as it is now, but its name,
// heartbeat and expiry, which the store stamps. n.mu must be held.
func (n *Node) recordLocked() Member {
	waiting := 0
	for _, e := range n.loaded {
		if e.ready {
			waiting++
		}
	}
	return Member{
		Host:        hostName(),
		PID:         os.Getpid(),
		Version:     moduleVersion(),
		Started:     n.started,
		Concurrency: n.cfg.concurrency,
		Running:     len(n.running),
		Windowed:    len(n.loaded),
		Waiting:     waiting,
		Owned:       n.shares.ownedPartitions(),
		BackedUp:    n.shares.backedPartitions(),
		Kinds:       n.handledKindsLocked(),
		Stopping:    n.state != stateStarted,
	}
}

// Members lists the live nodes of the prefix (those whose record has not
// expired), sorted by name, from any node, started or not. A node that was
// never started (one that only schedules) has no record.
func (n *Node) Members(ctx context.Context) ([]Member, error) {
	out, err := n.drv.Members(ctx)
	if err != nil {
		return nil, failed("members", err)
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
