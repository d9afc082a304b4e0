package pgtest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestDatabasesAreFreshAndApart: two databases of the shared server do not
// see each other's tables, and each starts empty.
func TestDatabasesAreFreshAndApart(t *testing.T) {
	ctx := context.Background()
	a := pgtest.Pool(t)
	b := pgtest.Pool(t)
	if _, err := a.Exec(ctx, "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database b sees a's table (%d)", n)
	}
	var user string
	if err := a.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil {
		t.Fatal(err)
	}
	if user != "postgres" {
		t.Fatalf("current_user = %q, want postgres", user)
	}
}

// TestKillRestartKeepsCommittedRows: a row committed before kill -9
// survives the crash and the restart, on the same port, and Stop removes
// the directory.
func TestKillRestartKeepsCommittedRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := pgtest.Start(t)
	url := s.Database(t)
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := c.Ping(ctx); err == nil {
		t.Fatal("the connection still answers after Kill")
	}
	_ = c.Close(ctx)
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	c, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var x int
	if err := c.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil {
		t.Fatal(err)
	}
	if x != 42 {
		t.Fatalf("x = %d after the restart, want 42", x)
	}
	dir := s.Dir
	_ = c.Close(ctx)
	// The database's drop runs at cleanup, after this; Stop is idempotent.
	if _, err := os.Stat(filepath.Join(dir, "data", "PG_VERSION")); err != nil {
		t.Fatalf("data directory: %v", err)
	}
}

// TestBinDirFindsInitdbAndPostgres: the directory found holds both
// programs the package runs.
func TestBinDirFindsInitdbAndPostgres(t *testing.T) {
	dir := pgtest.SkipOrFail(t)
	for _, p := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
