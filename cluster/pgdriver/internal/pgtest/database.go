package pgtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// One server per test package, started by the first test that asks for
// a database and stopped by Main after the last: a fresh database per
// test keeps the tests apart at a fraction of a server's start.

var shared struct {
	mu     sync.Mutex // guards server and err
	server *Server
	err    error // why the server could not start; every later test fails with it
}

// dbSeq numbers the databases made by Database.
var dbSeq atomic.Int64

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
// It skips or fails tb (SkipOrFail) without the binaries.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	bin := SkipOrFail(tb)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server == nil && shared.err == nil {
		shared.server, shared.err = Launch(bin)
	}
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.server
}

// Start starts a server of tb's own, stopped when tb ends: for a test
// that kills and restarts it.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := Launch(SkipOrFail(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Database makes a fresh database on the shared server for tb, dropped
// (with its connections ended) when tb ends, and returns its URL.
func Database(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).Database(tb)
}

// Database makes a fresh database on s for tb, dropped when tb ends, and
// returns its URL.
func (s *Server) Database(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("test_%d", dbSeq.Add(1))
	if err := s.admin(func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE DATABASE "+name)
		return err
	}); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if err := s.admin(func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			return err
		}); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.URL(name)
}

// admin runs f on a connection to the server's postgres database.
func (s *Server) admin(f func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return f(ctx, c)
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
