package pgserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgtest.Main(m))
}

// TestKillRestartKeepsCommittedRows: a row committed before kill -9
// survives the crash and the restart, on the same port, and Stop removes
// the directory.
func TestKillRestartKeepsCommittedRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := pgtest.Start(t)
	url := pgtest.DatabaseOn(t, s)
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
}

// TestStopRemovesTheDirectory: Stop ends the server and removes its
// directory; a second Stop does nothing.
func TestStopRemovesTheDirectory(t *testing.T) {
	s, err := pgserver.Launch(pgtest.SkipOrFail(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "data", "PG_VERSION")); err != nil {
		t.Fatalf("data directory: %v", err)
	}
	s.Stop()
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Fatalf("directory after Stop: %v, want it gone", err)
	}
	s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c, err := pgx.Connect(ctx, s.URL("postgres")); err == nil {
		_ = c.Close(ctx)
		t.Fatal("the server still accepts connections after Stop")
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
