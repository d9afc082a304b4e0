package redisdriver

import "sync"

// listening is which partitions' channels this driver's subscriptions
// follow. A claim passes whether its node hears the task's channel, so
// that the claim script sends "claimed" only when another node may hear it
// (lua/lib/claim.lua): a node that is a channel's one listener learns
// nothing from its own claims.
type listening struct {
	// mu guards count.
	mu    sync.Mutex
	count map[string]int // channel -> subscriptions following it
}

// follow records that a subscription now follows (delta 1) or no longer
// follows (delta -1) channel.
func (l *listening) follow(channel string, delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == nil {
		l.count = make(map[string]int)
	}
	if l.count[channel] += delta; l.count[channel] <= 0 {
		delete(l.count, channel)
	}
}

// hears is the claim scripts' last argument: "1" if a subscription
// follows channel, else "0".
func (l *listening) hears(channel string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count[channel] > 0 {
		return "1"
	}
	return "0"
}
