package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// stpectl on PostgreSQL: which store the flags and the environment
// choose, the Redis-only flags refused, migrate applying the schema, the
// health report, and no credential in any output. Every other command is
// run on PostgreSQL by the tests that run on each store (onEachStore,
// TestEveryCommandOnPostgres).

func TestTheStoreIsPostgresByFlagOrEnvironmentAndConflictsAreUsage(t *testing.T) {
	f := newPostgresFixture(t)
	f.schedule("mail", "a", nil, time.Now().Add(time.Hour))
	redis := newFixture(t)
	redis.schedule("mail", "r1", nil, time.Now().Add(time.Hour))
	redis.schedule("mail", "r2", nil, time.Now().Add(time.Hour))
	const nowhere = "redis://127.0.0.1:1/0"
	pending := func(name string, r result) int64 {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
		}
		var c countsDocJSON
		decodeOne(t, r.stdout, &c)
		return c.Pending
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want int64 // pending tasks seen: 1 on PostgreSQL, 2 on Redis
	}{
		{"-postgres", nil, []string{"-postgres", f.pgURL}, 1},
		{"STPE_POSTGRES_URL", []string{"STPE_POSTGRES_URL=" + f.pgURL}, nil, 1},
		{"STPE_POSTGRES_URL before REDIS_URL", []string{"STPE_POSTGRES_URL=" + f.pgURL, "REDIS_URL=" + nowhere}, nil, 1},
		{"-postgres before STPE_REDIS_URL", []string{"STPE_REDIS_URL=" + nowhere}, []string{"-postgres", f.pgURL}, 1},
		{"-redis before STPE_POSTGRES_URL", []string{"STPE_POSTGRES_URL=" + f.pgURL}, append(append([]string{}, redis.redisArgs...), "-prefix", redis.prefix), 2},
		{"-postgres after the command", nil, nil, 1},
	} {
		args := append(append([]string{}, tc.args...), "-json", "counts")
		if tc.name == "-postgres after the command" {
			args = []string{"counts", "-json", "-postgres", f.pgURL}
		}
		if got := pending(tc.name, runCtl(t, tc.env, args...)); got != tc.want {
			t.Errorf("%s: %d pending, want %d", tc.name, got, tc.want)
		}
	}

	// DATABASE_URL is not read: the store stays Redis, here nowhere.
	r := runCtl(t, []string{"DATABASE_URL=" + f.pgURL, "REDIS_URL=" + nowhere}, "counts")
	wantExit(t, r, 1, "stpectl: counts: redis 127.0.0.1:1: ")
}

func TestPostgresWithARedisFlagOrVariableIsUsage(t *testing.T) {
	url := pgDatabase(t, true)
	redis := newFixture(t)
	const nowhere = "redis://127.0.0.1:1/0"
	for _, tc := range []struct {
		env    []string
		args   []string
		stderr string
	}{
		{nil, []string{"-postgres", url, "-redis", redis.srv.Addr}, "stpectl: counts: -postgres and -redis: give one store, Redis or PostgreSQL"},
		{nil, []string{"-postgres", url, "-cluster"}, "-postgres and -cluster: give one store"},
		{nil, []string{"-postgres", url, "-sentinel-master", "m"}, "-postgres and -sentinel-master: give one store"},
		{[]string{"STPE_POSTGRES_URL=" + url}, []string{"-cluster"}, ""}, // a Redis flag chooses Redis: no conflict, Redis at localhost:6379
		{[]string{"STPE_POSTGRES_URL=" + url, "STPE_REDIS_URL=" + nowhere}, nil, "$STPE_REDIS_URL and $STPE_POSTGRES_URL both name a store: give -redis or -postgres"},
		{nil, []string{"-postgres", url, "-prefix", "{x}"}, "-prefix names a keyspace in Redis; in PostgreSQL the database"},
		{[]string{"STPE_POSTGRES_URL=" + url}, []string{"-prefix", "{x}"}, "-prefix names a keyspace in Redis"},
		{nil, []string{"-postgres", "redis://" + redis.srv.Addr}, "stpectl: -postgres redis://" + redis.srv.Addr + ": want a postgres:// or postgresql:// URL"},
		{nil, []string{"-postgres", "host=h dbname=d"}, "want a postgres:// or postgresql:// URL, not a connection string of keywords"},
		{nil, []string{"-postgres", ""}, "stpectl: -postgres: empty"},
	} {
		r := runCtl(t, tc.env, append(tc.args, "counts")...)
		if tc.stderr == "" {
			if r.code == 2 {
				t.Errorf("stpectl %v with %v: bad usage\n%s", tc.args, tc.env, r.stderr)
			}
			continue
		}
		wantExit(t, r, 2, tc.stderr)
	}
}

func TestMigrateAppliesTheSchemaToAFreshDatabase(t *testing.T) {
	url := pgDatabase(t, false)
	ctl := func(args ...string) result { return runCtl(t, nil, append([]string{"-postgres", url}, args...)...) }
	addr := strings.TrimPrefix(strings.Split(url, "?")[0], "postgres://postgres@")
	version := func() int {
		t.Helper()
		v, err := pgdriver.SchemaVersion(context.Background(), pgPool(t, url))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// The Redis layout migration's flags are refused, and change nothing.
	wantExit(t, ctl("migrate", "-partitions", "8"), 2, "migrate: -partitions and -force are for the layout migration of Redis")
	wantExit(t, ctl("migrate", "-force"), 2, "migrate: -partitions and -force are for the layout migration of Redis")
	if v := version(); v != 0 {
		t.Fatalf("a refused migrate changed the schema: version %d", v)
	}

	var doc migratePostgresJSON
	r := ctl("-json", "migrate")
	wantOK(t, r)
	decodeOne(t, r.stdout, &doc)
	if doc.Store != "postgres" || doc.FromVersion != 0 || doc.SchemaVersion != pgdriver.LatestVersion() || doc.Seconds <= 0 {
		t.Fatalf("migrate -json: %+v", doc)
	}
	if v := version(); v != pgdriver.LatestVersion() {
		t.Fatalf("after migrate: version %d", v)
	}
	r = ctl("migrate")
	wantOK(t, r)
	if want := fmt.Sprintf("postgres %s: schema at version %d already; nothing to apply\n", addr, pgdriver.LatestVersion()); r.stdout != want {
		t.Fatalf("migrate again: %q, want %q", r.stdout, want)
	}

	// The text report of a first migration names both versions.
	r = runCtl(t, nil, "-postgres", pgDatabase(t, false), "migrate")
	wantOK(t, r)
	if !strings.Contains(r.stdout, fmt.Sprintf(": schema migrated from version 0 to %d in ", pgdriver.LatestVersion())) {
		t.Fatalf("migrate: %q", r.stdout)
	}
}

func TestADatabaseWithoutTheTablesIsNoKeyspaceUntilMigrated(t *testing.T) {
	url := pgDatabase(t, false)
	ctl := func(args ...string) result { return runCtl(t, nil, append([]string{"-postgres", url}, args...)...) }
	addr := strings.TrimPrefix(strings.Split(url, "?")[0], "postgres://postgres@")
	wantExit(t, ctl("counts"), 1, "stpectl: counts: no keyspace in postgres "+addr+": the database has none of the cluster's tables; run \"stpectl migrate\" on it first\n")
	var failed errorJSON
	r := ctl("-json", "list")
	wantExit(t, r, 1)
	decodeOne(t, r.stdout, &failed)
	if failed.Reason != "no_keyspace" {
		t.Fatalf("list -json on a fresh database: %+v", failed)
	}
	var health healthJSON
	r = ctl("-json", "health", "-min-nodes", "0")
	wantExit(t, r, 1)
	decodeOne(t, r.stdout, &health)
	if health.OK || !strings.HasPrefix(health.Reason, "no keyspace in postgres "+addr) || health.PostgresVersion == "" {
		t.Fatalf("health of a fresh database: %+v", health)
	}

	wantOK(t, ctl("migrate"))
	var counts countsDocJSON
	r = ctl("-json", "counts")
	wantOK(t, r)
	decodeOne(t, r.stdout, &counts)
	if counts.Pending != 0 || len(counts.Kinds) != 0 {
		t.Fatalf("counts of a migrated database: %+v", counts)
	}
}

func TestHealthOnPostgresReportsTheServerNodesAndTasks(t *testing.T) {
	f := newPostgresFixture(t)
	f.schedule("mail", "a", nil, time.Now().Add(time.Hour))
	f.schedule("sms", "b", nil, time.Now().Add(time.Hour))
	// The URL shows with its user name redacted, as every user name is
	// (TestNoCommandShowsThePostgresCredentials): postgres://***@host/db.
	shown := strings.Replace(f.pgURL, "postgres://postgres@", "postgres://***@", 1)
	if shown == f.pgURL {
		t.Fatalf("the fixture's URL %q names no user", f.pgURL)
	}
	var doc healthJSON
	f.ctlJSON(0, &doc, "health", "-min-nodes", "0")
	if !doc.OK || doc.Store != "postgres" || doc.Postgres != shown || doc.PostgresVersion == "" || doc.RoundTripMicros <= 0 ||
		doc.Redis != "" || doc.RedisVersion != "" || doc.Layout != "" || len(doc.Masters) != 0 || doc.Counts.Pending != 2 {
		t.Fatalf("health -json: %+v", doc)
	}
	r := f.ctl("health", "-min-nodes", "0")
	wantOK(t, r)
	for _, want := range []string{"ok\n", "postgres: PostgreSQL " + doc.PostgresVersion + " at " + shown + ", round trip ",
		"nodes:  0 live, 0 stopping\n", "tasks:  2 pending, 0 running, 0 dead, 0 done\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("health lacks %q:\n%s", want, r.stdout)
		}
	}
	// Without a live node it is unhealthy, and warns of the kinds no node
	// handles once one runs.
	r = f.ctl("health")
	wantExit(t, r, 1)
	if !strings.HasPrefix(r.stdout, "unhealthy: 0 live node(s), want at least 1\n") {
		t.Fatalf("health without a node:\n%s", r.stdout)
	}
	f.worker("mail", func(context.Context, cluster.Task) error { return nil })
	f.ctlJSON(0, &doc, "health")
	if !doc.OK || doc.Nodes != 1 || len(doc.UnhandledKinds) != 1 || doc.UnhandledKinds[0] != (unhandledJSON{Kind: "sms", Pending: 1}) {
		t.Fatalf("health with a node for mail: %+v", doc)
	}
}

func TestPostgresDownExitsOneNamingTheServerOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	url := fmt.Sprintf("postgres://ops:Pw-s3cret@127.0.0.1:%d/app?sslmode=disable", port)
	r := runCtl(t, nil, "-postgres", url, "counts")
	want := fmt.Sprintf("stpectl: counts: postgres 127.0.0.1:%d: connect: connection refused\n", port)
	wantExit(t, r, 1)
	if r.stderr != want {
		t.Fatalf("stderr %q, want %q", r.stderr, want)
	}
	var doc healthJSON
	r = runCtl(t, nil, "-postgres", url, "-json", "health")
	wantExit(t, r, 1)
	decodeOne(t, r.stdout, &doc)
	if doc.OK || doc.Store != "postgres" || doc.Postgres != fmt.Sprintf("postgres://***@127.0.0.1:%d/app?sslmode=disable", port) ||
		doc.Reason != fmt.Sprintf("postgres 127.0.0.1:%d: connect: connection refused", port) {
		t.Fatalf("health -json with PostgreSQL down: %+v", doc)
	}
}

// secretRole makes a role of secretUser with secretPassword on the
// server of url (the test server trusts loopback connections, so the
// password is carried, not checked), dropped when t ends, and returns
// url as that role, with the credentials in its user information.
func secretRole(t *testing.T, url string) string {
	t.Helper()
	if _, err := pgPool(t, url).Exec(context.Background(), "CREATE ROLE "+secretUser+" LOGIN SUPERUSER PASSWORD '"+secretPassword+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pgPool(t, url).Exec(context.Background(), "DROP ROLE IF EXISTS "+secretUser) })
	return strings.Replace(url, "postgres://postgres@", "postgres://"+secretUser+":"+secretPassword+"@", 1)
}

func TestNoCommandShowsThePostgresCredentials(t *testing.T) {
	f := newPostgresFixture(t)
	userURL := secretRole(t, f.pgURL)
	paramURL := strings.Replace(f.pgURL, "postgres://postgres@", "postgresql://", 1) + "&user=" + secretUser + "&password=" + secretPassword
	f.schedule("mail", "a", []byte(`{"to":"ada"}`), time.Now().Add(time.Hour))
	f.schedule("mail", "b", []byte("x"), time.Now().Add(time.Hour))
	f.deadTasks("fax", "d")

	// Each command, and the Redis-only flags refused.
	commands := append(append([][]string{}, everyCommandOnce...), []string{"migrate", "-force"}, []string{"-prefix", "{x}", "counts"})
	for _, env := range [][]string{nil, {"STPE_POSTGRES_URL=" + userURL}} {
		for _, url := range []string{userURL, paramURL} {
			for _, args := range commands {
				for _, asJSON := range []bool{false, true} {
					all := append([]string{}, args...)
					if env == nil {
						all = append([]string{"-postgres", url}, all...)
					}
					if asJSON {
						all = append([]string{"-json"}, all...)
					}
					wantNoSecret(t, all, runCtl(t, env, all...))
				}
			}
		}
	}

}

func TestNoFailureToReachPostgresShowsTheCredentials(t *testing.T) {
	userURL := secretRole(t, pgDatabase(t, true))
	// Failures of the connection itself: a database that is not there, a
	// bad URL, a timeout, the server gone.
	base := strings.Split(userURL, "?")[0]
	for _, args := range [][]string{
		{"-postgres", strings.Replace(base, "/ctl_", "/nodb_", 1) + "?sslmode=disable", "counts"},
		{"-postgres", strings.Replace(base, "/ctl_", "/nodb_", 1) + "?sslmode=disable", "-json", "health"},
		{"-postgres", userURL + "&sslmode=sometimes", "counts"},
		{"-postgres", strings.Replace(userURL, "@127.0.0.1:", "@127.0.0.1:x", 1), "counts"},
		{"-postgres", userURL, "-timeout", "1ns", "counts"},
		{"-postgres", userURL, "-timeout", "1ns", "-json", "health"},
		{"-postgres", "host=127.0.0.1 user=" + secretUser + " password=" + secretPassword, "counts"},
	} {
		r := runCtl(t, nil, args...)
		if r.code == 0 {
			t.Errorf("stpectl %v succeeded", args)
		}
		wantNoSecret(t, args, r)
	}
	srv := postgresServer(t)
	down := strings.Replace(userURL, fmt.Sprintf(":%d/", srv.Port), ":1/", 1)
	for _, args := range everyCommandOnce[:12] {
		all := append([]string{"-postgres", down, "-timeout", "2s"}, args...)
		r := runCtl(t, nil, all...)
		if r.code == 0 {
			t.Errorf("stpectl %v succeeded with PostgreSQL down", all)
		}
		wantNoSecret(t, all, r)
	}
}
