package redisdriver

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeptTaskKeysAreTheBuiltOnes: the driver's kept keys of a task are
// Partition.TaskKeys's, in its order, for every partition and kind, the
// first call and the later ones, past the bound of kept pairs too; and a
// caller appending the timeline key to one call's keys changes no other
// call's.
func TestKeptTaskKeysAreTheBuiltOnes(t *testing.T) {
	d := New(nil, Options{Prefix: "{app}", Partitions: 4})
	for round := range 2 {
		for i, p := range d.parts {
			for _, kind := range []string{"email", "report", "a:b"} {
				id := "task-" + strconv.Itoa(i) + "-" + kind
				got := d.taskKeys(p, kind, id)
				require.Equal(t, p.TaskKeys(kind, id), got, "round %d", round)
				_ = append(got, p.Timeline(42)) // as timelineKeys does
				assert.Equal(t, p.TaskKeys(kind, id), d.taskKeys(p, kind, id)[:12])
				assert.Len(t, d.taskKeys(p, kind, id), 12)
			}
		}
	}
	assert.EqualValues(t, 12, d.kindKeys.n.Load(), "one entry per partition and kind")

	for k := range maxKindKeys + 10 {
		kind := "kind" + strconv.Itoa(k)
		require.Equal(t, d.parts[1].TaskKeys(kind, "x"), d.taskKeys(d.parts[1], kind, "x"))
	}
	assert.EqualValues(t, maxKindKeys, d.kindKeys.n.Load(), "no more pairs kept than the bound")
}

// BenchmarkTaskKeys: the keys of one task's script, built per call
// (Partition.TaskKeys) and kept per partition and kind (Driver.taskKeys),
// with the timeline key appended as Complete does.
func BenchmarkTaskKeys(b *testing.B) {
	d := New(nil, Options{Prefix: "{scheduler}", Partitions: 64})
	p := d.parts[7]
	b.Run("built", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = append(p.TaskKeys("bench", "0123456789abcdef0123456789abcdef"), p.Timeline(29000000))
		}
	})
	b.Run("kept", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = append(d.taskKeys(p, "bench", "0123456789abcdef0123456789abcdef"), p.Timeline(29000000))
		}
	})
}
