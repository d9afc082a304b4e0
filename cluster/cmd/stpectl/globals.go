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
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/redis/go-redis/v9"
)

// The global flags, accepted before the command and after it, and the
// connection they describe.

// defaultTimeout bounds a whole command unless -timeout says otherwise.
const defaultTimeout = 10 * time.Second

// globalFlags names the global flags, which a command's usage leaves to the
// tool's.
var globalFlags = map[string]bool{"redis": true, "cluster": true, "sentinel-master": true, "prefix": true, "json": true, "timeout": true}

// globals are the values of the global flags.
type globals struct {
	conn    redisconn.Config // -redis, -cluster, -sentinel-master and the environment
	prefix  string
	json    bool
	timeout time.Duration
}

// register defines the global flags on fs. With getenv (the top level) the
// defaults are set from the environment; without it (a command's own flag
// set, parsed after the top level) the values already parsed stay the
// defaults.
func (g *globals) register(fs *flag.FlagSet, getenv func(string) string) {
	if getenv != nil {
		g.conn, g.prefix, g.timeout = redisconn.FromEnv(getenv), cluster.DefaultPrefix, defaultTimeout
	}
	g.conn.RegisterFlags(fs)
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
	}
	return nil
}

// session is what a command works with: a producer-only node (never
// started, no handlers) on the chosen Redis and prefix, and where to write.
type session struct {
	rdb     redis.UniversalClient
	node    *cluster.Node
	addr    string // the Redis address, redacted
	prefix  string
	timeout time.Duration
	json    bool
	stdout  io.Writer
	stderr  io.Writer
}

// open connects and makes the node, with the number of partitions the
// keyspace's layout record names (the default for a keyspace without
// one; a Redis that cannot be reached is left to the command to report).
// Unless anyPrefix, a prefix with no keyspace is refused with the list of
// those there are.
func (g *globals) open(ctx context.Context, stdout, stderr io.Writer, anyPrefix bool) (*session, error) {
	conn := g.conn
	conn.DialTimeout = min(g.timeout, 5*time.Second)
	conn.PoolSize = 8
	conn.MaxRetries = 1
	rdb, err := conn.Open()
	if err != nil {
		// "redisconn: address A: why", A redacted, said as the flag.
		return nil, &usageError{msg: "stpectl: " + strings.Replace(err.Error(), "redisconn: address ", "-redis ", 1)}
	}
	s := &session{rdb: rdb, addr: conn.String(), prefix: g.prefix, timeout: g.timeout, json: g.json, stdout: stdout, stderr: stderr}
	parts, err := cluster.RecordedPartitions(ctx, rdb, g.prefix)
	if errors.Is(err, cluster.ErrLayout) {
		_ = rdb.Close()
		return nil, err
	}
	noRecord := err == nil && parts == 0 // else Redis failed: the command reports it
	if parts == 0 {
		parts = cluster.DefaultPartitions
	}
	// The node's own warnings (none is expected of a node never started)
	// go to stderr, redacted like everything stpectl writes there.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	node, err := cluster.New(rdb, cluster.WithPrefix(g.prefix), cluster.WithPartitions(parts),
		cluster.WithConcurrency(1), cluster.WithLogger(logger))
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	s.node = node
	if noRecord && !anyPrefix {
		if err := s.checkKeyspace(ctx); err != nil {
			_ = rdb.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *session) close() { _ = s.rdb.Close() }

// errNoKeyspace is wrapped by the error of a command given a prefix under
// which Redis holds nothing.
var errNoKeyspace = errors.New("no keyspace under the prefix")

// checkKeyspace refuses a prefix without a layout record that holds no
// task, no paused kind and no live node either (a keyspace only producers
// wrote to has tasks but no record yet), naming the prefixes that do have
// a keyspace. A Redis that cannot be reached is left to the command.
func (s *session) checkKeyspace(ctx context.Context) error {
	_, kinds, err := s.node.CountsByKind(ctx)
	if err != nil || len(kinds) > 0 {
		return nil
	}
	members, err := s.node.Members(ctx)
	if err != nil || len(members) > 0 {
		return nil
	}
	there, err := cluster.Keyspaces(ctx, s.rdb)
	if err != nil {
		return nil
	}
	have := "none has one"
	if len(there) > 0 {
		quoted := make([]string, len(there))
		for i, p := range there {
			quoted[i] = fmt.Sprintf("%q", p)
		}
		have = "these have one: " + strings.Join(quoted, ", ")
	}
	return &refusal{why: fmt.Sprintf("-prefix %q: no keyspace in redis %s (%s)", s.prefix, s.addr, have), sentinel: errNoKeyspace}
}
