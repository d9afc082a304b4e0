package cluster

import (
	"testing"
	"time"
)

// TestOffsetEstimateTrustsTheShortestRoundTrip: of the last readings, the
// one read in the shortest round trip decides, and an old one is
// forgotten after offsetSamples newer ones.
func TestOffsetEstimateTrustsTheShortestRoundTrip(t *testing.T) {
	var e offsetEstimate
	if got := e.best(); got != 0 {
		t.Fatalf("no reading: %v, want 0", got)
	}
	base := time.Unix(1_700_000_000, 0)
	// Redis runs 5 ms ahead; the reading is taken in the middle of a
	// round trip of rtt, and a slow way back skews a long one.
	read := func(rtt, skew time.Duration) time.Duration {
		sent := base
		redis := sent.Add(rtt/2 - skew).Add(5 * time.Millisecond)
		base = base.Add(time.Second)
		return e.add(sent, sent.Add(rtt), redis.UnixMicro())
	}
	if got := read(40*time.Millisecond, 15*time.Millisecond); got != -10*time.Millisecond {
		t.Fatalf("one long reading: %v", got)
	}
	if got := read(200*time.Microsecond, 0); got != 5*time.Millisecond {
		t.Fatalf("a short reading wins: %v", got)
	}
	for range offsetSamples - 1 {
		if got := read(30*time.Millisecond, 10*time.Millisecond); got != 5*time.Millisecond {
			t.Fatalf("longer readings do not displace the short one: %v", got)
		}
	}
	if got := read(30*time.Millisecond, 10*time.Millisecond); got != -5*time.Millisecond {
		t.Fatalf("the short reading is forgotten after %d newer: %v", offsetSamples, got)
	}
	if got := e.add(base, base.Add(-time.Millisecond), base.UnixMicro()); got != -5*time.Millisecond {
		t.Fatalf("a reading with a negative round trip is ignored: %v", got)
	}
}
