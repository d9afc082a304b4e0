package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseManyReadsEveryTaskAndRefusesMalformedMessages(t *testing.T) {
	tasks, ok := parseMany("many 17 k 3 a b 18 kind 0  19 k 2 xy")
	assert.True(t, ok)
	assert.Equal(t, []pendingTask{{id: "a b", kind: "k", due: 17}, {id: "", kind: "kind", due: 18}, {id: "xy", kind: "k", due: 19}}, tasks)

	for _, bad := range []string{
		"17 k id",            // a single task's message
		"many ",              // no task
		"many 17 k 5 abc",    // ID shorter than its length
		"many x k 1 a",       // bad due time
		"many 17 k -1 a",     // bad length
		"many 17 k 1 ab",     // no space after the ID
		"many 17 k 1 a ",     // a space and nothing after it
		"many 17 k",          // fields missing
		"claimed many 1 k 1", // another message
	} {
		_, ok := parseMany(bad)
		assert.False(t, ok, "%q", bad)
	}
}
