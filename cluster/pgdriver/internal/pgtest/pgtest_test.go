package pgtest_test

import (
	"context"
	"testing"

	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
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
