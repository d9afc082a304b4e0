// Command stpe-dashboard serves the cluster pages of the dashboard
// package against a Redis keyspace or a PostgreSQL database (the Postgres
// driver), as a program of its own: what asynqmon is to asynq and riverui
// to River. It makes a node for inspection only (never started, no
// handlers: it claims and runs nothing) and serves dashboard.New(nil,
// dashboard.WithCluster(node)) on 127.0.0.1:8080 unless -addr says
// otherwise. It is a module of its own, so that the dashboard module does
// not require pgx.
//
//	stpe-dashboard -redis redis://127.0.0.1:6379/0 -read-only
//	stpe-dashboard -postgres postgres://ops@db.internal/app   # PGPASSWORD holds the password
//	STPE_DASHBOARD_BASIC_AUTH=ops:secret stpe-dashboard -addr :8080
//	stpe-dashboard -trust-header X-Forwarded-User   # behind an authenticating proxy
//
// See README.md in this folder for every flag.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr))
}
