package redisdriver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPartitionTagsSpreadOverTheSlots: partition i's slot is in the i-th
// of P equal ranges, for prefixes with and without a hash tag, and the
// partition of an ID is stable.
func TestPartitionTagsSpreadOverTheSlots(t *testing.T) {
	for _, prefix := range []string{"{scheduler}", "app:{jobs}:x", "plain"} {
		for _, p := range []int{1, 3, 64, 1024} {
			parts := PartitionsOf(prefix, p)
			require.Len(t, parts, p)
			for i, part := range parts {
				_, tag, _ := SplitHashTag(part.Pending())
				require.NotEmpty(t, tag, "%s has a hash tag", part.Pending())
				slot := int(KeySlot(tag))
				assert.True(t, slot >= i*ClusterSlots/p && slot < (i+1)*ClusterSlots/p,
					"prefix %q p=%d partition %d: slot %d", prefix, p, i, slot)
			}
		}
	}
	assert.Equal(t, "{scheduler/0.1}", PartitionsOf("{scheduler}", 64)[0].Prefix)
	assert.Equal(t, uint16(12739), KeySlot("123456789")%ClusterSlots, "CRC16-XMODEM of the reference string")
}
