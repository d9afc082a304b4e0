package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The binary on PostgreSQL: a server of the test's own (package pgserver,
// which the Postgres driver's tests use through their internal pgtest),
// a database migrated, a task scheduled by a node on the Postgres driver,
// and the dashboard given the database by -postgres and by
// STPE_POSTGRES_URL.

// startPostgres launches a PostgreSQL server for t, stopped when t ends;
// without the binaries it skips t (fails it under
// SCHEDULER_REQUIRE_POSTGRES=1).
func startPostgres(t *testing.T) *pgserver.Server {
	t.Helper()
	bin := pgserver.BinDir()
	if bin == "" {
		if os.Getenv("SCHEDULER_REQUIRE_POSTGRES") == "1" {
			t.Fatal(pgserver.InstallHint + " (SCHEDULER_REQUIRE_POSTGRES=1 forbids skipping)")
		}
		t.Skip(pgserver.InstallHint)
	}
	srv, err := pgserver.Launch(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func TestBinaryServesAPostgresStore(t *testing.T) {
	srv := startPostgres(t)
	if err := srv.CreateDatabase("app"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, srv.URL("app"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	const password = "Pg-s3cret-Pw"
	if _, err := admin.Exec(ctx, "CREATE ROLE ops LOGIN SUPERUSER PASSWORD '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	if _, err := pgdriver.Migrate(ctx, admin); err != nil {
		t.Fatal(err)
	}
	drv, err := postgresconn.Driver(admin, pgdriver.DefaultPartitions)
	if err != nil {
		t.Fatal(err)
	}
	producer, err := cluster.NewWithDriver(drv)
	if err != nil {
		t.Fatal(err)
	}
	id, err := producer.Schedule(ctx, "mail", []byte("hello"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The pool given a user and a password (trusted on loopback by the
	// test server: carried, not checked), which no output may show.
	pgURL := strings.Replace(srv.URL("app"), "postgres://postgres@", "postgres://ops:"+password+"@", 1)
	bin := buildBinary(t)

	rw := startDashboard(t, bin, nil, "-postgres", pgURL, "-trust-header", "X-Forwarded-User")
	user := http.Header{"X-Forwarded-User": {"alice"}}
	code, page := do(t, "GET", rw.url+"cluster/tasks?state=pending", nil, user)
	if code != http.StatusOK || !strings.Contains(page, id) {
		t.Fatalf("pending tasks page: %d, task %s shown: %v", code, id, strings.Contains(page, id))
	}
	code, page = do(t, "GET", rw.url+"cluster/", nil, user)
	m := csrfField.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("overview: %d, CSRF token found: %v", code, m != nil)
	}
	if code, _ := do(t, "POST", rw.url+"cluster/pause", url.Values{"csrf": {m[1]}, "kind": {"mail"}}, user); code != http.StatusSeeOther {
		t.Fatalf("pause: %d, want 303", code)
	}
	if kinds, err := producer.PausedKinds(ctx); err != nil || len(kinds) != 1 || kinds[0] != "mail" {
		t.Fatalf("paused kinds after the pause action: %v, %v", kinds, err)
	}

	// Read-only, the database from the environment.
	ro := startDashboard(t, bin, []string{"STPE_POSTGRES_URL=" + pgURL}, "-read-only", "-trust-header", "X-Forwarded-User")
	if code, page := do(t, "GET", ro.url+"cluster/tasks?state=pending", nil, user); code != http.StatusOK || !strings.Contains(page, id) {
		t.Fatalf("read-only pending tasks page: %d", code)
	}
	if code, _ := do(t, "POST", ro.url+"cluster/resume", url.Values{"csrf": {m[1]}, "kind": {"mail"}}, user); code != http.StatusForbidden {
		t.Errorf("POST to a read-only dashboard: %d, want 403", code)
	}

	ro.stop(t)
	rw.stop(t)
	for _, p := range []*dashboardProcess{rw, ro} {
		if log := p.stderr.String(); strings.Contains(log, password) {
			t.Errorf("the database's password was written to the log:\n%s", log)
		}
	}
	// Neither dashboard claimed the task due all along.
	info, ok, err := producer.Get(ctx, id)
	if err != nil || !ok || info.State != cluster.Pending || len(info.History) != 0 {
		t.Errorf("the task after the dashboards: ok %v, err %v, %+v", ok, err, info)
	}
}

func TestTheStoreFlagsAreCheckedAndNoPostgresPasswordIsEchoed(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		code int
		want string
	}{
		{nil, []string{"-postgres", "postgres://ops:topsecret@h/db", "-redis", "h:6379"}, 2, "-postgres and -redis: give one store"},
		{nil, []string{"-postgres", "postgres://ops:topsecret@h/db", "-prefix", "{x}"}, 2, "-prefix names a keyspace in Redis"},
		{map[string]string{"STPE_POSTGRES_URL": "postgres://ops:topsecret@h/db", "STPE_REDIS_URL": "h:6379"}, nil, 2,
			"$STPE_REDIS_URL and $STPE_POSTGRES_URL both name a store"},
		{nil, []string{"-postgres", "postgres://ops:topsecret@h:notaport/db"}, 2, "postgresconn: URL postgres://***@h:notaport/db: "},
		{nil, []string{"-postgres", "mysql://ops:topsecret@h/db"}, 2, "want a postgres:// or postgresql:// URL"},
	} {
		var stderr strings.Builder
		code := run(context.Background(), tc.args, func(k string) string { return tc.env[k] }, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q %v: exit %d, want %d, saying %q:\n%s", tc.args, tc.env, code, tc.code, tc.want, stderr.String())
		}
		if strings.Contains(stderr.String(), "topsecret") {
			t.Errorf("%q: the password was echoed: %s", tc.args, stderr.String())
		}
	}
}
