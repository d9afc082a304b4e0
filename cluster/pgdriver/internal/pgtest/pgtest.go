// Package pgtest gives the Postgres driver's tests a real PostgreSQL
// (pgserver): one server per test package, started by the first test that
// needs it and stopped by Main after the last, a fresh database per test,
// and a server of its own for a test that kills it. It is the one place
// the tests get Postgres from; there is no mock. It is the counterpart of
// the cluster module's redistest.
//
// Without the binaries, the tests skip and say how to install them
// (apt-get install -y postgresql), unless SCHEDULER_REQUIRE_POSTGRES=1
// (set by CI), where they fail.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RequireEnv is the variable that turns missing Postgres binaries from a
// skip into a failure.
const RequireEnv = "SCHEDULER_REQUIRE_POSTGRES"

var shared struct {
	mu     sync.Mutex // guards server and err
	server *pgserver.Server
	err    error // why the server could not start; every later test fails with it
}

// dbSeq numbers the databases made by Database.
var dbSeq atomic.Int64

// SkipOrFail skips tb (or fails it under SCHEDULER_REQUIRE_POSTGRES=1)
// when the binaries are missing, and returns their directory otherwise.
func SkipOrFail(tb testing.TB) string {
	tb.Helper()
	if d := pgserver.BinDir(); d != "" {
		return d
	}
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatal(pgserver.InstallHint + " (" + RequireEnv + "=1 forbids skipping)")
	}
	tb.Skip(pgserver.InstallHint)
	return ""
}

// Main runs the tests of m and then stops the package's shared server,
// removing its directory. It fits goleak.VerifyTestMain:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
func Main(m interface{ Run() int }) interface{ Run() int } { return mainRunner{m} }

type mainRunner struct{ m interface{ Run() int } }

func (r mainRunner) Run() int {
	code := r.m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		shared.server.Stop()
		shared.server = nil
	}
	return code
}

// Shared returns the package's shared server, starting it on first use.
func Shared(tb testing.TB) *pgserver.Server {
	tb.Helper()
	bin := SkipOrFail(tb)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server == nil && shared.err == nil {
		shared.server, shared.err = pgserver.Launch(bin)
	}
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.server
}

// Start starts a server of tb's own, stopped when tb ends: for a test
// that kills and restarts it.
func Start(tb testing.TB) *pgserver.Server {
	tb.Helper()
	s, err := pgserver.Launch(SkipOrFail(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Database makes a fresh database on the shared server for tb, dropped
// (its connections ended) when tb ends, and returns its URL.
func Database(tb testing.TB) string {
	tb.Helper()
	return DatabaseOn(tb, Shared(tb))
}

// DatabaseOn makes a fresh database on s for tb, dropped when tb ends,
// and returns its URL.
func DatabaseOn(tb testing.TB, s *pgserver.Server) string {
	tb.Helper()
	name := fmt.Sprintf("test_%d", dbSeq.Add(1))
	if err := s.CreateDatabase(name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.DropDatabase(name); err != nil {
			tb.Error(err)
		}
	})
	return s.URL(name)
}

// Pool makes a fresh database on the shared server for tb and returns a
// pool on it, closed when tb ends (before the database is dropped).
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return NewPool(tb, Database(tb))
}

// NewPool returns a pool on url, closed when tb ends.
func NewPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatalf("pgtest: pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}
