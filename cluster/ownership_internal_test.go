package cluster

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodesNamed makes n live claimers handling kinds.
func nodesNamed(n int, kinds ...string) []liveNode {
	live := make([]liveNode, n)
	for i := range live {
		live[i] = liveNode{id: fmt.Sprintf("node-%d", i), kinds: kinds}
	}
	return live
}

// TestEveryPartitionHasOneOwnerAndAnotherBackup: for each kind, the nodes'
// own views of one membership agree: each partition has exactly one owner
// and one backup, never the same node, and no node owns more than
// ceil(P/N).
func TestEveryPartitionHasOneOwnerAndAnotherBackup(t *testing.T) {
	for _, n := range []int{1, 2, 3, 6, 10} {
		for _, p := range []int{1, 7, 64, 1024} {
			live := nodesNamed(n, "email", "sms")
			owners := make([]int, p)
			backups := make([]int, p)
			reapers := make([]int, p)
			reapOwners := make([]int, p) // the one reaper that reports the partition's pending samples
			limit := (p + n - 1) / n
			for _, m := range live {
				sh := computeShares(m.id, m.kinds, live, p)
				owned := 0
				for i := range p {
					if sh.owns("email", i) {
						owners[i]++
						owned++
						assert.False(t, sh.backed["email"][i], "n=%d p=%d: %s owns and backs up partition %d", n, p, m.id, i)
					}
					if sh.backed["email"][i] {
						backups[i]++
					}
					if sh.reaped[i] {
						reapers[i]++
					}
					if sh.reapOwned[i] {
						reapOwners[i]++
						assert.True(t, sh.reaped[i], "n=%d p=%d: %s owns partition %d as a reaper but does not reap it", n, p, m.id, i)
					}
				}
				assert.LessOrEqual(t, owned, limit, "n=%d p=%d: %s owns too many", n, p, m.id)
			}
			for i := range p {
				require.Equal(t, 1, owners[i], "n=%d p=%d: owners of partition %d", n, p, i)
				require.Equal(t, min(n-1, 1), backups[i], "n=%d p=%d: backups of partition %d", n, p, i)
				require.Equal(t, min(n, 2), reapers[i], "n=%d p=%d: reapers of partition %d", n, p, i)
				require.Equal(t, 1, reapOwners[i], "n=%d p=%d: reaper owners of partition %d", n, p, i)
			}
		}
	}
}

// TestOwnershipFollowsTheKindsEachNodeHandles: a node owns partitions only
// for its kinds, and a kind handled by one node is all that node's.
func TestOwnershipFollowsTheKindsEachNodeHandles(t *testing.T) {
	live := []liveNode{{id: "a", kinds: []string{"email", "sms"}}, {id: "b", kinds: []string{"email"}}}
	a := computeShares("a", []string{"email", "sms"}, live, 64)
	b := computeShares("b", []string{"email"}, live, 64)
	assert.Nil(t, b.owned["sms"])
	for i := range 64 {
		assert.True(t, a.owns("sms", i), "a alone handles sms")
		assert.NotEqual(t, a.owns("email", i), b.owns("email", i), "partition %d has one email owner", i)
	}
	assert.Equal(t, 64, a.ownedPartitions())
	assert.Equal(t, 32, b.ownedPartitions())
}

// TestAJoiningNodeMovesLittle: when a fourth node joins three, the
// partitions that change owner are about the share the new node takes,
// not a reshuffle.
func TestAJoiningNodeMovesLittle(t *testing.T) {
	const p = 64
	before := nodesNamed(3, "email")
	after := nodesNamed(4, "email")
	owner := func(live []liveNode) []string {
		out := make([]string, p)
		for _, m := range live {
			sh := computeShares(m.id, m.kinds, live, p)
			for i := range p {
				if sh.owns("email", i) {
					out[i] = m.id
				}
			}
		}
		return out
	}
	was, is := owner(before), owner(after)
	moved, taken := 0, 0
	for i := range p {
		if was[i] != is[i] {
			moved++
		}
		if is[i] == "node-3" {
			taken++
		}
	}
	assert.Equal(t, 16, taken, "the new node takes its share")
	assert.LessOrEqual(t, moved, taken+p/8, "moved %d partitions for a share of %d", moved, taken)
}

// TestANodeOutsideTheMembershipCountsItselfIn: before its first renewal a
// node owns what it would own as a member, so it never owns nothing.
func TestANodeOutsideTheMembershipCountsItselfIn(t *testing.T) {
	sh := computeShares("new", []string{"email"}, nil, 8)
	for i := range 8 {
		assert.True(t, sh.owns("email", i))
		assert.True(t, sh.reaped[i])
	}
}
