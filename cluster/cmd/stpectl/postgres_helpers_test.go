package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A PostgreSQL of the tests' own (package pgserver: initdb into a
// temporary directory, a free loopback port): one server for the
// package, started by the first test that needs it and stopped by
// TestMain, and a fresh database per test. It is what the Postgres
// driver's own tests get from pgdriver/internal/pgtest, which a package
// outside pgdriver cannot import.

// requirePostgresEnv turns missing PostgreSQL binaries from a skip into a
// failure (CI sets it).
const requirePostgresEnv = "SCHEDULER_REQUIRE_POSTGRES"

var pgShared struct {
	mu     sync.Mutex // guards server and err
	server *pgserver.Server
	err    error // why the server could not start; every later test fails with it
}

// pgSeq numbers the databases made by pgDatabase.
var pgSeq atomic.Int64

// postgresServer returns the package's server, starting it on first use;
// without the binaries it skips t (fails it under
// SCHEDULER_REQUIRE_POSTGRES=1).
func postgresServer(t *testing.T) *pgserver.Server {
	t.Helper()
	bin := pgserver.BinDir()
	if bin == "" {
		if os.Getenv(requirePostgresEnv) == "1" {
			t.Fatal(pgserver.InstallHint + " (" + requirePostgresEnv + "=1 forbids skipping)")
		}
		t.Skip(pgserver.InstallHint)
	}
	pgShared.mu.Lock()
	defer pgShared.mu.Unlock()
	if pgShared.server == nil && pgShared.err == nil {
		pgShared.server, pgShared.err = pgserver.Launch(bin)
	}
	if pgShared.err != nil {
		t.Fatal(pgShared.err)
	}
	return pgShared.server
}

// stopPostgres stops the package's server, if one was started.
func stopPostgres() {
	pgShared.mu.Lock()
	defer pgShared.mu.Unlock()
	if pgShared.server != nil {
		pgShared.server.Stop()
		pgShared.server = nil
	}
}

// pgDatabase makes a fresh database for t, dropped when t ends, and
// returns its URL; migrated, it holds the cluster's tables.
func pgDatabase(t *testing.T, migrated bool) string {
	t.Helper()
	srv := postgresServer(t)
	name := fmt.Sprintf("ctl_%d", pgSeq.Add(1))
	if err := srv.CreateDatabase(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.DropDatabase(name); err != nil {
			t.Error(err)
		}
	})
	url := srv.URL(name)
	if migrated {
		pool := pgPool(t, url)
		if _, err := pgdriver.Migrate(context.Background(), pool); err != nil {
			t.Fatal(err)
		}
	}
	return url
}

// pgPool returns a pool on url, closed when t ends (before its database
// is dropped).
func pgPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// pgNode makes a node on the Postgres driver of a pool of its own on url,
// with the default partitions and opts.
func pgNode(t *testing.T, url string, opts ...cluster.Option) *cluster.Node {
	t.Helper()
	drv, err := postgresconn.Driver(pgPool(t, url), pgdriver.DefaultPartitions)
	if err != nil {
		t.Fatal(err)
	}
	n, err := cluster.NewWithDriver(drv, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// newPostgresFixture is a fixture on a fresh, migrated PostgreSQL
// database of the test's own.
func newPostgresFixture(t *testing.T) *fixture {
	t.Helper()
	url := pgDatabase(t, true)
	f := &fixture{t: t, pgURL: url}
	f.newNode = func(opts ...cluster.Option) *cluster.Node {
		t.Helper()
		return pgNode(t, url, opts...)
	}
	f.node = f.newNode()
	return f
}

// onEachStore runs check on a fixture of each store, as subtests: a
// redis-server and a PostgreSQL database of the test's own.
func onEachStore(t *testing.T, check func(t *testing.T, f *fixture)) {
	t.Run("redis", func(t *testing.T) { check(t, newFixture(t)) })
	t.Run("postgres", func(t *testing.T) { check(t, newPostgresFixture(t)) })
}
