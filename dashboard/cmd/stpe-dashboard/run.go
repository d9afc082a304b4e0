package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/go-stpe/scheduler/dashboard"
)

// shutdownGrace is how long a shutdown waits for the requests in flight.
const shutdownGrace = 10 * time.Second

// options are the command's flags.
type options struct {
	addr, prefix             string
	conn                     redisconn.Config    // -redis, -cluster, -sentinel-master and the environment
	pg                       postgresconn.Config // -postgres and the environment
	postgres                 bool                // the store is PostgreSQL (postgresconn.Config.Chosen)
	readOnly                 bool
	basicAuth, basicAuthFile string
	trustHeader              string
}

// parseFlags reads args; the store is given as stpectl takes it: Redis
// by package redisconn's flags and variables (-redis, -cluster,
// -sentinel-master, STPE_REDIS_URL, REDIS_URL...), PostgreSQL by
// postgresconn's (-postgres, STPE_POSTGRES_URL), chosen by the same rule.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	o := options{conn: redisconn.FromEnv(getenv), pg: postgresconn.FromEnv(getenv)}
	fs := flag.NewFlagSet("stpe-dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.conn.RegisterFlags(fs)
	o.pg.RegisterFlags(fs)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&o.prefix, "prefix", cluster.DefaultPrefix, "the keyspace's prefix in Redis (cluster.WithPrefix)")
	fs.BoolVar(&o.readOnly, "read-only", false, "show no actions; POSTs are refused")
	fs.StringVar(&o.basicAuth, "basic-auth", "", "user:password for HTTP basic auth (or $"+basicAuthEnv+", or -basic-auth-file)")
	fs.StringVar(&o.basicAuthFile, "basic-auth-file", "", "file holding user:password for HTTP basic auth")
	fs.StringVar(&o.trustHeader, "trust-header", "", "serve only requests carrying this header, set by an authenticating reverse proxy (e.g. X-Forwarded-User)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.prefix == "" || o.addr == "" {
		return o, errors.New("-addr and -prefix must not be empty")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	o.postgres, err = o.pg.Chosen(given, getenv)
	return o, err
}

// run serves the dashboard until ctx ends, then shuts down gracefully; it
// returns the exit code (2 for bad flags, 1 for a failure).
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	// Nothing it writes to stderr (its errors, its log and the node's)
	// may show a password of Redis or PostgreSQL.
	stderr = redisconn.RedactingWriter(stderr)
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	o, err := parseFlags(args, getenv, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "stpe-dashboard:", err)
		}
		return 2
	}
	creds, withCreds, err := loadCredentials(o.basicAuth, o.basicAuthFile, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "stpe-dashboard:", err)
		return 2
	}
	if withCreds && o.trustHeader != "" {
		fmt.Fprintln(stderr, "stpe-dashboard: basic auth and -trust-header: give one")
		return 2
	}
	node, closeStore, err := openNode(ctx, o, logger)
	if err != nil {
		// "redisconn: address A: why" or "postgresconn: URL U: why",
		// redacted, for a bad address: bad flags.
		fmt.Fprintln(stderr, "stpe-dashboard:", err)
		if errors.Is(err, scheduler.ErrInvalidArgument) {
			return 2
		}
		return 1
	}
	defer closeStore()
	h, err := handler(node, o)
	if err != nil {
		fmt.Fprintln(stderr, "stpe-dashboard:", err)
		return 1
	}
	switch {
	case withCreds:
		h = requireBasicAuth(creds, h)
	case o.trustHeader != "":
		h = requireHeader(o.trustHeader, h)
	default:
		logger.Warn("stpe-dashboard: no authentication: anyone who reaches " + o.addr + " sees the tasks")
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintln(stderr, "stpe-dashboard:", err)
		return 1
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("stpe-dashboard: listening", "url", "http://"+l.Addr().String()+"/", "read_only", o.readOnly)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		fmt.Fprintln(stderr, "stpe-dashboard:", err)
		return 1
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		fmt.Fprintln(stderr, "stpe-dashboard: shutdown:", err)
		return 1
	}
	<-served
	logger.Info("stpe-dashboard: stopped")
	return 0
}

// handler serves the dashboard over node.
func handler(node *cluster.Node, o options) (http.Handler, error) {
	opts := []dashboard.Option{dashboard.WithCluster(node)}
	if o.readOnly {
		opts = append(opts, dashboard.ReadOnly())
	}
	return dashboard.New(nil, opts...)
}
