package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// The global flags, accepted before the command and after it, and the
// connection they describe: a Redis (-redis, the default) or a PostgreSQL
// database (-postgres).

// defaultTimeout bounds a whole command unless -timeout says otherwise.
const defaultTimeout = 10 * time.Second

// globalFlags names the global flags, which a command's usage leaves to the
// tool's.
var globalFlags = map[string]bool{"redis": true, "cluster": true, "sentinel-master": true, "postgres": true,
	"prefix": true, "json": true, "timeout": true}

// globals are the values of the global flags.
type globals struct {
	conn    redisconn.Config    // -redis, -cluster, -sentinel-master and the environment
	pg      postgresconn.Config // -postgres and the environment
	prefix  string
	json    bool
	timeout time.Duration
	// getenv reads the environment.
	getenv func(string) string
	// given are the global flags given on the command line.
	given map[string]bool
	// usePostgres is true when the store is PostgreSQL (set by check).
	usePostgres bool
}

// register defines the global flags on fs. With getenv (the top level) the
// defaults are set from the environment; without it (a command's own flag
// set, parsed after the top level) the values already parsed stay the
// defaults.
func (g *globals) register(fs *flag.FlagSet, getenv func(string) string) {
	if getenv != nil {
		g.conn, g.pg, g.prefix, g.timeout = redisconn.FromEnv(getenv), postgresconn.FromEnv(getenv), cluster.DefaultPrefix, defaultTimeout
		g.getenv = getenv
	}
	g.conn.RegisterFlags(fs)
	g.pg.RegisterFlags(fs)
	fs.StringVar(&g.prefix, "prefix", g.prefix, "key `prefix` of the cluster's tasks in Redis, as given to cluster.WithPrefix")
	fs.BoolVar(&g.json, "json", g.json, "write one JSON document to stdout")
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "give up on the command after this `duration`")
}

// noteGiven records which global flags fs was given.
func (g *globals) noteGiven(fs *flag.FlagSet) {
	if g.given == nil {
		g.given = map[string]bool{}
	}
	fs.Visit(func(f *flag.Flag) {
		if globalFlags[f.Name] {
			g.given[f.Name] = true
		}
	})
}

// check refuses values no command can use, and a choice of store that
// contradicts itself (postgresconn.Config.Chosen).
func (g *globals) check() error {
	switch {
	case g.timeout <= 0:
		return usagef("-timeout %v: want more than 0", g.timeout)
	case g.prefix == "":
		return usagef("-prefix: empty")
	}
	pg, err := g.pg.Chosen(g.given, g.getenv)
	if err != nil {
		return err // said after the command's name: "stpectl: counts: -postgres and -redis: ..."
	}
	g.usePostgres = pg
	return nil
}

// storeName and storeAddr name the store the flags describe, for the
// messages of a failure before it is opened.
func (g *globals) storeName() string {
	if g.usePostgres {
		return "postgres"
	}
	return "redis"
}

func (g *globals) storeAddr() string {
	if g.usePostgres {
		return g.pg.String()
	}
	return g.conn.String()
}

// store is where the tasks are, a Redis (redisStore) or a PostgreSQL
// database (pgStore): what a command needs of it beside the node.
type store interface {
	// name is "redis" or "postgres", as messages name the store.
	name() string
	// addr is the server's address for messages (redacted).
	addr() string
	// given is the address as given, redacted.
	given() string
	// named is how the node's errors name the store ("cluster: what:
	// NAMED: why", the driver's Addr), or "" for "redis ADDR".
	named() string
	// newNode makes the producer-only node on the store, with the
	// number of partitions its layout records (the default without a
	// record); noRecord is true when there is none. A store that cannot
	// be reached is left to the command to report.
	newNode(ctx context.Context, prefix string, logger *slog.Logger) (node *cluster.Node, noRecord bool, err error)
	// checkKeyspace refuses a store that holds no keyspace of the
	// cluster, saying what to give instead (wrapping errNoKeyspace).
	checkKeyspace(ctx context.Context, s *session) error
	// ping fills the store's part of health's report: its version and
	// round trip.
	ping(ctx context.Context, doc *healthJSON) error
	close()
}

// session is what a command works with: a producer-only node (never
// started, no handlers) on the chosen store (and prefix), and where to
// write.
type session struct {
	store store
	node  *cluster.Node
	addr  string // the store's address, for messages (redacted)
	given string // the address as given, redacted
	// noRecord is true when the keyspace has no layout record.
	noRecord bool
	prefix   string
	timeout  time.Duration
	json     bool
	stdout   io.Writer
	stderr   io.Writer
}

// open connects and makes the node (none for a storeOnly command).
// Unless the command takes anyPrefix, a keyspace that is not there is
// refused (with the list of those there are, on Redis).
func (g *globals) open(ctx context.Context, stdout, stderr io.Writer, cmd *command) (*session, error) {
	var st store
	var err error
	if g.usePostgres {
		st, err = openPostgres(g.pg, g.timeout)
	} else {
		st, err = openRedis(g.conn, g.timeout)
	}
	if err != nil {
		return nil, err
	}
	s := &session{store: st, addr: st.addr(), given: st.given(), prefix: g.prefix, timeout: g.timeout,
		json: g.json, stdout: stdout, stderr: stderr}
	// The node's own warnings (none is expected of a node never started)
	// go to stderr, redacted like everything stpectl writes there.
	if cmd.storeOnly {
		return s, nil
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s.node, s.noRecord, err = st.newNode(ctx, g.prefix, logger)
	if err != nil {
		st.close()
		return nil, err
	}
	if !cmd.anyPrefix {
		if err := st.checkKeyspace(ctx, s); err != nil {
			st.close()
			return nil, err
		}
	}
	return s, nil
}

func (s *session) close() { s.store.close() }
