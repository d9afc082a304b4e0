package cluster

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Following a Redis Cluster failover. go-redis's ClusterClient rereads
// which master serves which slot on a MOVED reply, or once its state is
// older than ClusterStateReloadInterval (default 60 s). When the master of
// the prefix's slot dies, no MOVED ever comes: every call goes to the dead
// address and fails, for up to that minute after a replica took over. So
// a node asks its cluster client to reread the slots after any failed
// Redis call of its own (a claim, renewal, sweep, standby look, reap,
// membership renewal, Schedule or Cancel; but not one refused for want of
// replica acknowledgements, whose master answered), and finds the promoted
// replica as soon as the cluster knows it. A node made by NewWithDriver
// has no Redis client of its own, and follows nothing.

// followFailover asks a cluster client to reread the cluster's slots, in
// the background, after err; a reply from Redis (an error such as a
// refused script) says the connection works, and changes nothing.
func (n *Node) followFailover(err error) {
	c, ok := n.rdb.(*redis.ClusterClient)
	if !ok || err == nil || errors.Is(err, ErrNotReplicated) {
		return
	}
	var reply redis.Error
	if errors.As(err, &reply) && !isClusterDown(reply) {
		return
	}
	c.ReloadState(context.Background())
}

// isClusterDown reports whether a Redis error reply says the slot has no
// master serving it right now (during a failover).
func isClusterDown(err redis.Error) bool {
	for _, prefix := range []string{"CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "READONLY"} {
		if strings.HasPrefix(err.Error(), prefix) {
			return true
		}
	}
	return false
}
