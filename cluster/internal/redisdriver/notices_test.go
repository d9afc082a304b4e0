package redisdriver

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/stretchr/testify/assert"
)

func TestParseManyReadsEveryTaskAndRefusesMalformedMessages(t *testing.T) {
	tasks, ok := parseMany("many 17 k 3 a b 18 kind 0  19 k 2 xy")
	assert.True(t, ok)
	assert.Equal(t, []driver.NoticedTask{{ID: "a b", Kind: "k", Due: time.UnixMicro(17)},
		{ID: "", Kind: "kind", Due: time.UnixMicro(18)}, {ID: "xy", Kind: "k", Due: time.UnixMicro(19)}}, tasks)

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

func TestParseNoticeReadsEachMessage(t *testing.T) {
	for payload, want := range map[string]driver.Notice{
		"17 k an id":   {Kind: driver.NoticePending, Tasks: []driver.NoticedTask{{ID: "an id", Kind: "k", Due: time.UnixMicro(17)}}},
		"claimed a b":  {Kind: driver.NoticeClaimed, ID: "a b"},
		"canceled a":   {Kind: driver.NoticeCanceled, ID: "a"},
		"resumed k":    {Kind: driver.NoticeResumed, TaskKind: "k"},
		"ended @daily": {Kind: driver.NoticeEnded, TaskKind: "@daily"},
	} {
		got, ok := parseNotice(payload)
		assert.True(t, ok, "%q", payload)
		assert.Equal(t, want, got, "%q", payload)
	}
	for _, bad := range []string{"", "x k id", "17 k"} {
		_, ok := parseNotice(bad)
		assert.False(t, ok, "%q", bad)
	}
}
