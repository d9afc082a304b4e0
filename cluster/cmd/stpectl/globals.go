package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// The global flags, accepted before the command and after it, and the
// connection they describe.

// defaultTimeout bounds a whole command unless -timeout says otherwise.
const defaultTimeout = 10 * time.Second

// globalFlags names the global flags, which a command's usage leaves to the
// tool's.
var globalFlags = map[string]bool{"redis": true, "prefix": true, "json": true, "timeout": true}

// globals are the values of the global flags.
type globals struct {
	redis   string
	prefix  string
	json    bool
	timeout time.Duration
}

// defaultRedis is the Redis address when -redis is not given: STPE_REDIS_URL,
// then REDIS_URL, then localhost:6379.
func defaultRedis(getenv func(string) string) string {
	for _, v := range []string{"STPE_REDIS_URL", "REDIS_URL"} {
		if a := strings.TrimSpace(getenv(v)); a != "" {
			return a
		}
	}
	return "localhost:6379"
}

// register defines the global flags on fs. With getenv (the top level) the
// defaults are set; without it (a command's own flag set, parsed after the
// top level) the values already parsed stay the defaults.
func (g *globals) register(fs *flag.FlagSet, getenv func(string) string) {
	if getenv != nil {
		g.redis, g.prefix, g.timeout = defaultRedis(getenv), cluster.DefaultPrefix, defaultTimeout
	}
	fs.StringVar(&g.redis, "redis", g.redis, "Redis `address`: host:port, or a URL redis://[user:password@]host:port/db (rediss:// for TLS); default $STPE_REDIS_URL, then $REDIS_URL, then localhost:6379")
	fs.StringVar(&g.prefix, "prefix", g.prefix, "key `prefix` of the cluster's tasks, as given to cluster.WithPrefix")
	fs.BoolVar(&g.json, "json", g.json, "write one JSON document to stdout")
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "give up on the command after this `duration`")
}

// check refuses values no command can use.
func (g *globals) check() error {
	switch {
	case g.timeout <= 0:
		return usagef("-timeout %v: want more than 0", g.timeout)
	case g.prefix == "":
		return usagef("-prefix: empty")
	case g.redis == "":
		return usagef("-redis: empty")
	}
	return nil
}

// redisOptions turns -redis into client options: a redis://, rediss:// or
// unix:// URL, or host:port. Every call is bounded by the command's
// deadline.
func (g *globals) redisOptions() (*redis.Options, error) {
	var opts *redis.Options
	if strings.Contains(g.redis, "://") {
		o, err := redis.ParseURL(g.redis)
		if err != nil {
			return nil, usagef("-redis %q: %v", g.redis, err)
		}
		opts = o
	} else {
		opts = &redis.Options{Addr: g.redis}
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = min(g.timeout, 5*time.Second)
	opts.PoolSize = 8
	opts.MaxRetries = 1
	opts.DialerRetries = 2
	return opts, nil
}

// session is what a command works with: a producer-only node (never
// started, no handlers) on the chosen Redis and prefix, and where to write.
type session struct {
	rdb    *redis.Client
	node   *cluster.Node
	addr   string // the Redis address, as given
	json   bool
	stdout io.Writer
	stderr io.Writer
}

// open connects and makes the node, with the number of partitions the
// keyspace's layout record names (the default for a keyspace without one;
// a Redis that cannot be reached is left to the command to report).
func (g *globals) open(stdout, stderr io.Writer) (*session, error) {
	opts, err := g.redisOptions()
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	parts, err := cluster.RecordedPartitions(ctx, rdb, g.prefix)
	cancel()
	if errors.Is(err, cluster.ErrLayout) {
		_ = rdb.Close()
		return nil, fmt.Errorf("stpectl: %w", err)
	}
	if err != nil || parts == 0 {
		parts = cluster.DefaultPartitions
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	node, err := cluster.New(rdb, cluster.WithPrefix(g.prefix), cluster.WithPartitions(parts),
		cluster.WithConcurrency(1), cluster.WithLogger(logger))
	if err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("stpectl: %w", err)
	}
	return &session{rdb: rdb, node: node, addr: g.redis, json: g.json, stdout: stdout, stderr: stderr}, nil
}

func (s *session) close() { _ = s.rdb.Close() }
