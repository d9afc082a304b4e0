package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/redis/go-redis/v9"
)

// redisStore is a Redis: one server, a Redis Cluster or a master found
// through Sentinel (package redisconn), under the key prefix -prefix.
type redisStore struct {
	rdb    redis.UniversalClient
	conn   redisconn.Config
	prefix string
}

// openRedis makes the client conn describes, tuned for a tool: one retry,
// a dial bounded by the command's timeout (5 s at most).
func openRedis(conn redisconn.Config, timeout time.Duration) (*redisStore, error) {
	conn.DialTimeout = min(timeout, 5*time.Second)
	conn.PoolSize = 8
	conn.MaxRetries = 1
	conn.DialRetries = 2
	rdb, err := conn.Open()
	if err != nil {
		// "redisconn: address A: why", A redacted, said as the flag.
		return nil, &usageError{msg: "stpectl: " + strings.Replace(err.Error(), "redisconn: address ", "-redis ", 1)}
	}
	return &redisStore{rdb: rdb, conn: conn}, nil
}

func (r *redisStore) name() string  { return "redis" }
func (r *redisStore) given() string { return r.conn.String() }
func (r *redisStore) close()        { _ = r.rdb.Close() }
func (r *redisStore) named() string { return "" } // cluster.New's node says "redis ADDR"

// addr is where the client goes: the server's host:port (or socket), a
// Redis Cluster's seeds, or, through Sentinel, the address as given
// (redacted), which names the sentinels.
func (r *redisStore) addr() string {
	switch c := r.rdb.(type) {
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	case *redis.Client:
		if layoutOf(r.rdb) != "sentinel" {
			return c.Options().Addr
		}
	}
	return r.conn.String()
}

// newNode makes the node with the number of partitions the keyspace's
// layout record names.
func (r *redisStore) newNode(ctx context.Context, prefix string, logger *slog.Logger) (*cluster.Node, bool, error) {
	r.prefix = prefix
	parts, err := cluster.RecordedPartitions(ctx, r.rdb, prefix)
	if errors.Is(err, cluster.ErrLayout) {
		return nil, false, err
	}
	// Redis failing is left to the command, which checks its flags and
	// arguments first: bad usage is said as such whether Redis answers or
	// not.
	noRecord := err == nil && parts == 0
	if parts == 0 {
		parts = cluster.DefaultPartitions
	}
	node, err := cluster.New(r.rdb, cluster.WithPrefix(prefix), cluster.WithPartitions(parts),
		cluster.WithConcurrency(1), cluster.WithLogger(logger))
	return node, noRecord, err
}

// errNoKeyspace is wrapped by the error of a command given a keyspace
// that is not there: a prefix under which Redis holds nothing, a database
// without the cluster's tables.
var errNoKeyspace = errors.New("no keyspace under the prefix")

// checkKeyspace refuses a prefix without a layout record that holds no
// task, no paused kind and no live node either (a keyspace only producers
// wrote to has tasks but no record yet), naming the prefixes that do have
// a keyspace. A Redis that cannot be reached is left to the command.
func (r *redisStore) checkKeyspace(ctx context.Context, s *session) error {
	if !s.noRecord {
		return nil
	}
	_, kinds, err := s.node.CountsByKind(ctx)
	if err != nil || len(kinds) > 0 {
		return nil
	}
	members, err := s.node.Members(ctx)
	if err != nil || len(members) > 0 {
		return nil
	}
	there, err := cluster.Keyspaces(ctx, r.rdb)
	if err != nil {
		return nil
	}
	have := "no prefix has one there"
	if len(there) > 0 {
		quoted := make([]string, len(there))
		for i, p := range there {
			quoted[i] = fmt.Sprintf("%q", p)
		}
		have = "the prefixes with one: " + strings.Join(quoted, ", ")
	}
	return &refusal{why: fmt.Sprintf("-prefix %q: no keyspace in redis %s; %s", s.prefix, s.addr, have), sentinel: errNoKeyspace}
}

// ping measures each master's round trip and reads its version: the one
// server, or every master of a Redis Cluster, which must also report its
// state ok.
func (r *redisStore) ping(ctx context.Context, doc *healthJSON) error {
	doc.Redis, doc.Layout = r.given(), layoutOf(r.rdb)
	var mu sync.Mutex // guards doc.Masters: ForEachMaster asks the masters at once
	ping := func(ctx context.Context, c *redis.Client) error {
		m := masterJSON{Addr: r.addr()}
		if _, ok := r.rdb.(*redis.ClusterClient); ok {
			m.Addr = c.Options().Addr
		}
		// The first PING dials; the second measures the round trip alone.
		for range 2 {
			start := time.Now()
			if err := c.Ping(ctx).Err(); err != nil {
				return err
			}
			m.RoundTripMicros = time.Since(start).Microseconds()
		}
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
				m.RedisVersion = v
			}
		}
		mu.Lock()
		doc.Masters = append(doc.Masters, m)
		mu.Unlock()
		return nil
	}
	switch c := r.rdb.(type) {
	case *redis.ClusterClient:
		state, err := c.ClusterInfo(ctx).Result()
		if err != nil {
			return err
		}
		if !strings.Contains(state, "cluster_state:ok") {
			return errors.New("the Redis Cluster reports cluster_state:fail")
		}
		if err := c.ForEachMaster(ctx, ping); err != nil {
			return err
		}
	case *redis.Client:
		if err := ping(ctx, c); err != nil {
			return err
		}
	default:
		return fmt.Errorf("a %T client cannot be checked", r.rdb)
	}
	slices.SortFunc(doc.Masters, func(a, b masterJSON) int { return strings.Compare(a.Addr, b.Addr) })
	doc.RedisVersion = doc.Masters[0].RedisVersion
	for _, m := range doc.Masters {
		doc.RoundTripMicros = max(doc.RoundTripMicros, m.RoundTripMicros)
	}
	return nil
}

// layoutOf names the Redis layout rdb reaches.
func layoutOf(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return "cluster"
	case *redis.Client:
		if c.Options().Addr == "FailoverClient" {
			return "sentinel"
		}
	}
	return "server"
}
