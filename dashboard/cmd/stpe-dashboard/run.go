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

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/go-stpe/scheduler/dashboard"
)

// shutdownGrace is how long a shutdown waits for the requests in flight.
const shutdownGrace = 10 * time.Second

// options are the command's flags.
type options struct {
	addr, prefix             string
	conn                     redisconn.Config // -redis, -cluster, -sentinel-master and the environment
	readOnly                 bool
	basicAuth, basicAuthFile string
	trustHeader              string
}

// parseFlags reads args; Redis is given as stpectl takes it (package
// redisconn: -redis, -cluster, -sentinel-master, STPE_REDIS_URL,
// REDIS_URL...).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	o := options{conn: redisconn.FromEnv(getenv)}
	fs := flag.NewFlagSet("stpe-dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.conn.RegisterFlags(fs)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&o.prefix, "prefix", cluster.DefaultPrefix, "the keyspace's prefix (cluster.WithPrefix)")
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
	return o, nil
}

// run serves the dashboard until ctx ends, then shuts down gracefully; it
// returns the exit code (2 for bad flags, 1 for a failure).
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
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
	rdb, err := o.conn.Open()
	if err != nil {
		// "redisconn: address A: why", A and why redacted.
		fmt.Fprintln(stderr, "stpe-dashboard:", err)
		return 2
	}
	defer rdb.Close()
	h, err := handler(ctx, rdb, o, logger)
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

// handler makes the inspection node (never started, so it claims and runs
// nothing) with the keyspace's recorded partitions, and the dashboard over
// it.
func handler(ctx context.Context, rdb redis.UniversalClient, o options, logger *slog.Logger) (http.Handler, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	parts, err := cluster.RecordedPartitions(rctx, rdb, o.prefix)
	cancel()
	if errors.Is(err, cluster.ErrLayout) {
		return nil, err
	}
	if err != nil || parts == 0 {
		if err != nil {
			logger.Warn("stpe-dashboard: reading the keyspace's layout failed; using the default partitions", "err", err)
		}
		parts = cluster.DefaultPartitions
	}
	node, err := cluster.New(rdb, cluster.WithPrefix(o.prefix), cluster.WithPartitions(parts),
		cluster.WithConcurrency(1), cluster.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	opts := []dashboard.Option{dashboard.WithCluster(node)}
	if o.readOnly {
		opts = append(opts, dashboard.ReadOnly())
	}
	return dashboard.New(nil, opts...)
}
