package cluster

import (
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Ownership: which node loads which tasks. For each kind, the partitions
// are shared among the live claimers that handle it by rendezvous hashing
// (each partition goes to the node with the highest hash of node, kind
// and partition), balanced: no node gets more than ceil(P/N) of them, the
// next in a partition's order taking it instead. The owner of a partition
// for a kind loads its tasks of that kind into its window, hears the
// partition's notices and claims each at its due time. The next node in
// the partition's order backs it up: without loading anything, it looks
// every WithBackupDelay (backing off to the sweep interval while it finds
// nothing) for tasks of the partition that are overdue by more than
// WithBackupDelay, and claims them, newest first: the tasks of a busy,
// stalled or dead owner. So each node holds about 1/N of the near-due
// tasks and hears about 1/N of the notices, and a node that joins, leaves
// or dies moves only its own share (Temporal's history shards and Kafka's
// consumer groups share the same way).
//
// Ownership only decides who tries first. Running a task takes a claim,
// one atomic script fenced by the claim's owner token, so two nodes that
// disagree on the membership for a moment (one has seen a node join that
// the other has not) claim in vain at worst: a task is never run twice
// because of a move, and never lost, since every partition with a live
// node handling the kind has an owner, and the sweep and the backups read
// Redis itself, not a node's memory. A dead node's share moves when its
// membership expires, within a lease; its backups claim its overdue tasks
// meanwhile.
//
// The expired leases of a partition are returned by its reapers: the owner
// and backup of the partition among all live claimers, whatever their
// kinds, so a lease is reaped even if no live node handles its kind.

// shares is one node's part of the partitions, computed from one view of
// the membership.
type shares struct {
	owned  map[string][]bool // by kind, by partition index: loaded and claimed on time
	backed map[string][]bool // by kind, by partition index: overdue tasks claimed
	reaped []bool            // by partition index: expired leases returned
	// reapOwned marks, by partition index, the partitions reaped as their
	// owner rather than their backup: the node that reports their
	// pending samples (Observer.PendingSampled).
	reapOwned []bool
}

// owns reports whether the shares own partition i for kind.
func (s shares) owns(kind string, i int) bool { return s.owned[kind] != nil && s.owned[kind][i] }

// ownedPartitions is the number of partitions owned for some kind.
func (s shares) ownedPartitions() int { return countAny(s.owned) }

// backedPartitions is the number of partitions backed up for some kind.
func (s shares) backedPartitions() int { return countAny(s.backed) }

// followed are the partitions owned for some kind, whose notices the node
// follows, in order.
func (s shares) followed() []int {
	var out []int
	var seen []bool
	for _, owned := range s.owned {
		if seen == nil {
			seen = make([]bool, len(owned))
		}
		for i, ok := range owned {
			seen[i] = seen[i] || ok
		}
	}
	for i, ok := range seen {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// countAny counts the partitions set for at least one kind.
func countAny(byKind map[string][]bool) int {
	n := 0
	var seen []bool
	for _, set := range byKind {
		if seen == nil {
			seen = make([]bool, len(set))
		}
		for i, ok := range set {
			if ok && !seen[i] {
				seen[i] = true
				n++
			}
		}
	}
	return n
}

// computeShares is the part of node self, which handles kinds, of p
// partitions, given the live claimers. A node missing from live (before
// its first renewal, or after a lapse) counts itself in.
func computeShares(self string, kinds []string, live []liveNode, p int) shares {
	all := make([]string, 0, len(live)+1)
	byKind := make(map[string][]string)
	seen := false
	for _, m := range live {
		all = append(all, m.id)
		seen = seen || m.id == self
		for _, k := range m.kinds {
			byKind[k] = append(byKind[k], m.id)
		}
	}
	if !seen {
		all = append(all, self)
		for _, k := range kinds {
			byKind[k] = append(byKind[k], self)
		}
	}
	sh := shares{owned: make(map[string][]bool), backed: make(map[string][]bool)}
	for _, k := range kinds {
		nodes := byKind[k]
		if !slices.Contains(nodes, self) {
			nodes = append(nodes, self)
		}
		owner, backup := assign(nodes, k, p)
		sh.owned[k] = mark(owner, self)
		sh.backed[k] = mark(backup, self)
	}
	owner, backup := assign(all, "", p)
	sh.reapOwned = mark(owner, self)
	sh.reaped = mark(owner, self)
	for i, ok := range mark(backup, self) {
		sh.reaped[i] = sh.reaped[i] || ok
	}
	return sh
}

// mark tells, by partition, whether node is the one named.
func mark(names []string, node string) []bool {
	out := make([]bool, len(names))
	for i, n := range names {
		out[i] = n == node
	}
	return out
}

// assign gives each of p partitions an owner and a backup among nodes for
// kind ("" for the reapers): balanced rendezvous hashing. The partitions
// are taken in order; each goes to the first node in its rendezvous order
// that has fewer than ceil(p/len(nodes)) partitions, and its backup is the
// first other node in that order ("" with one node).
func assign(nodes []string, kind string, p int) (owner, backup []string) {
	owner, backup = make([]string, p), make([]string, p)
	if len(nodes) == 0 {
		return owner, backup
	}
	limit := (p + len(nodes) - 1) / len(nodes)
	count := make(map[string]int, len(nodes))
	ranked := make([]string, len(nodes))
	weight := make(map[string]uint64, len(nodes))
	for i := range p {
		for _, n := range nodes {
			weight[n] = rendezvous(n, kind, i)
		}
		copy(ranked, nodes)
		slices.SortFunc(ranked, func(a, b string) int {
			switch {
			case weight[a] > weight[b]:
				return -1
			case weight[a] < weight[b]:
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, n := range ranked {
			if count[n] < limit {
				owner[i] = n
				count[n]++
				break
			}
		}
		for _, n := range ranked {
			if n != owner[i] {
				backup[i] = n
				break
			}
		}
	}
	return owner, backup
}

// rendezvous is the weight of node for partition i of kind.
func rendezvous(node, kind string, i int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(i)))
	// FNV-1a's last bytes barely reach the high bits; mix them in
	// (the finalizer of SplitMix64).
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// sameShares reports whether a and b are the same part.
func sameShares(a, b shares) bool {
	same := func(x, y map[string][]bool) bool {
		return maps.EqualFunc(x, y, func(p, q []bool) bool { return slices.Equal(p, q) })
	}
	return same(a.owned, b.owned) && same(a.backed, b.backed) && slices.Equal(a.reaped, b.reaped) &&
		slices.Equal(a.reapOwned, b.reapOwned)
}
