package pgdriver

import (
	"testing"
	"time"
)

// TestParseNotice reads each shape the trigger and Resume write, and
// refuses others.
func TestParseNotice(t *testing.T) {
	good := map[string]Notice{
		"pending 1700000000000001 mail a b":   {Partition: 7, State: "pending", RunAt: time.UnixMicro(1700000000000001), Kind: "mail", ID: "a b"},
		"running 5 k id@2020-01-01T00:00:00Z": {Partition: 7, State: "running", RunAt: time.UnixMicro(5), Kind: "k", ID: "id@2020-01-01T00:00:00Z"},
		"removed mail x":                      {Partition: 7, State: "removed", Kind: "mail", ID: "x"},
		"resumed mail":                        {Partition: 7, State: "resumed", Kind: "mail"},
		"ended @nightly":                      {Partition: 7, State: "ended", Kind: "@nightly"},
	}
	for payload, want := range good {
		got, ok := parseNotice("stpe_p7", payload)
		if !ok || got.State != want.State || !got.RunAt.Equal(want.RunAt) || got.Kind != want.Kind || got.ID != want.ID || got.Partition != 7 {
			t.Errorf("parseNotice(%q) = %+v, %v; want %+v", payload, got, ok, want)
		}
	}
	if got, ok := parseNotice(membersChannel, "changed"); !ok || got.State != "members" {
		t.Errorf("parseNotice of the membership channel = %+v, %v; want the members notice", got, ok)
	}
	for _, bad := range [][2]string{
		{"stpe_p7", "pending"}, {"stpe_p7", "pending x k id"}, {"stpe_p7", "pending 5 k"}, {"stpe_p7", "other 5 k id"},
		{"stpe_p7", "removed k"}, {"stpe_p7", "resumed "}, {"stpe_p7", "ended "}, {"other", "resumed k"}, {"stpe_px", "resumed k"},
	} {
		if got, ok := parseNotice(bad[0], bad[1]); ok {
			t.Errorf("parseNotice(%q, %q) = %+v, want refused", bad[0], bad[1], got)
		}
	}
}
