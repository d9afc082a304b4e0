package redisdriver

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestNoObserverLeavesTheClientAsItIs: a driver without an observer calls
// Redis through the client it was given, not a wrapper.
func TestNoObserverLeavesTheClientAsItIs(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	if d := New(rdb, Options{Prefix: "p", Partitions: 1}); d.rdb != redis.UniversalClient(rdb) {
		t.Fatalf("the driver wraps its client without an observer: %T", d.rdb)
	}
}
