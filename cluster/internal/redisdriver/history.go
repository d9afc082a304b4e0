package redisdriver

import (
	"encoding/json"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The run history: the scripts that end a run append a record of it, as
// JSON, to the field "hist" of the task's hash (lua/lib/history.lua).

// storedRun is a run record as the scripts write it.
type storedRun struct {
	Node    string `json:"n"`
	Start   string `json:"s"`
	End     string `json:"e"`
	Outcome string `json:"o"`
	Error   string `json:"x"`
}

// ParseHistory reads the field "hist" of a task's hash, oldest run first;
// a field it cannot read gives no history rather than an error, since the
// task itself is sound.
func ParseHistory(s string) []driver.RunRecord {
	if s == "" {
		return nil
	}
	var stored []storedRun
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil
	}
	out := make([]driver.RunRecord, 0, len(stored))
	for _, r := range stored {
		start, _ := parseMicros(r.Start)
		end, _ := parseMicros(r.End)
		out = append(out, driver.RunRecord{Node: r.Node, Start: time.UnixMicro(start), End: time.UnixMicro(end),
			Outcome: driver.Outcome(r.Outcome), Error: r.Error})
	}
	return out
}
