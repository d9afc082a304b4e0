package schedulertest

// The instants and channel checks the package's tests share.

import (
	"testing"
	"time"
)

// start is an arbitrary fixed instant; tests express times as offsets from it.
var start = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// at returns start+d, for readable expectations.
func at(d time.Duration) time.Time { return start.Add(d) }

// requireEmpty fails if a value can be received from c right now.
func requireEmpty(t *testing.T, c <-chan time.Time) {
	t.Helper()
	select {
	case v := <-c:
		t.Fatalf("unexpected value on C: %v", v)
	default:
	}
}

// requireValue receives the value that must already be in c.
func requireValue(t *testing.T, c <-chan time.Time) time.Time {
	t.Helper()
	select {
	case v := <-c:
		return v
	default:
		t.Fatal("no value on C")
		return time.Time{}
	}
}
