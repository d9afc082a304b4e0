package cluster

import "time"

// The node's offset from Redis's clock: when the node thinks a task is
// due. Each renewal of the membership, and each claim Redis found early,
// reads Redis's clock (TIME) inside a round trip, so Redis's time was read
// somewhere in that round trip: taking its middle, the error is at most
// half the round trip. A loaded machine or network stretches some round
// trips, unevenly, so the estimate keeps the last offsetSamples readings
// and trusts the one with the shortest round trip (NTP's clock filter).
// An offset read too early would make every claim arrive before the due
// time by Redis's clock, refused and sent again: one more round trip per
// task.

// offsetSamples is how many readings the estimate keeps.
const offsetSamples = 4

// offsetEstimate is the node's offset from Redis's clock. Guarded by
// Node.mu.
type offsetEstimate struct {
	samples [offsetSamples]offsetSample
	n       int // readings kept, up to offsetSamples
	next    int // where the next reading goes
}

// offsetSample is one reading: Redis's clock minus the node's, and the
// round trip it was read in.
type offsetSample struct {
	offset, rtt time.Duration
}

// add keeps a reading of Redis's time redisNow (µs) in a round trip from
// sent to got, by the node's clock, and returns the offset to use now.
func (e *offsetEstimate) add(sent, got time.Time, redisNow int64) time.Duration {
	rtt := got.Sub(sent)
	if rtt >= 0 {
		e.samples[e.next] = offsetSample{offset: time.UnixMicro(redisNow).Sub(sent.Add(rtt / 2)), rtt: rtt}
		e.next = (e.next + 1) % offsetSamples
		e.n = min(e.n+1, offsetSamples)
	}
	return e.best()
}

// best is the offset of the reading with the shortest round trip, or 0
// with none.
func (e *offsetEstimate) best() time.Duration {
	if e.n == 0 {
		return 0
	}
	b := e.samples[0]
	for _, s := range e.samples[1:e.n] {
		if s.rtt < b.rtt {
			b = s
		}
	}
	return b.offset
}
