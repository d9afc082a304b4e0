package postgresconn_test

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
)

// env is a getenv of a fixed environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestFromEnvReadsSTPE_POSTGRES_URLAndNotDATABASE_URL(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"STPE_POSTGRES_URL": " postgres://h/db "}, "postgres://h/db"},
		{map[string]string{"DATABASE_URL": "postgres://app/db"}, ""},
		{map[string]string{"STPE_REDIS_URL": "redis://r:1"}, ""},
	} {
		if got := postgresconn.FromEnv(env(tc.vars)); got.URL != tc.want {
			t.Errorf("FromEnv(%v).URL = %q, want %q", tc.vars, got.URL, tc.want)
		}
	}
}

func TestTheFlagOverridesTheEnvironmentAndItsUsageShowsNoSecret(t *testing.T) {
	c := postgresconn.FromEnv(env(map[string]string{"STPE_POSTGRES_URL": "postgres://admin:s3cret@h/db"}))
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var usage strings.Builder
	fs.SetOutput(&usage)
	c.RegisterFlags(fs)
	fs.PrintDefaults()
	if strings.Contains(usage.String(), "s3cret") || strings.Contains(usage.String(), "admin") {
		t.Fatalf("usage shows the environment's credentials:\n%s", usage.String())
	}
	if !strings.Contains(usage.String(), "$STPE_POSTGRES_URL") {
		t.Fatalf("usage does not name the variable:\n%s", usage.String())
	}
	if c.URL != "postgres://admin:s3cret@h/db" {
		t.Fatalf("registering changed the URL: %q", c.URL)
	}
	if err := fs.Parse([]string{"-postgres", "postgresql://other/db"}); err != nil {
		t.Fatal(err)
	}
	if c.URL != "postgresql://other/db" {
		t.Fatalf("after the flag: %q", c.URL)
	}
	if got := c.String(); got != "postgresql://other/db" {
		t.Fatalf("String() = %q", got)
	}
	c.URL = "postgres://admin:s3cret@h/db?sslpassword=k3y"
	if got := c.String(); got != "postgres://***@h/db?sslpassword=***" {
		t.Fatalf("String() = %q", got)
	}
}

func TestOpenRefusesWhatIsNotAPostgresURLRedacted(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"", "empty"},
		{"  ", "empty"},
		{"redis://admin:s3cret@h:6379/0", "want a postgres:// or postgresql:// URL"},
		{"host=h user=admin password=s3cret dbname=app", "want a postgres:// or postgresql:// URL, not a connection string of keywords"},
		{"POSTGRES://h/db", "want a postgres:// or postgresql:// URL"},
		{"h:5432", "want a postgres:// or postgresql:// URL"},
		{"postgres://admin:s3cret@h:notaport/db", "invalid port"},
		{"postgres://admin:s3cret@h/db?sslmode=sometimes", "sslmode is invalid"},
		{"postgres://h/db?password=s3cret&connect_timeout=soon", "connect_timeout"},
	} {
		pool, err := postgresconn.Config{URL: tc.url}.Open()
		if err == nil {
			pool.Close()
			t.Errorf("Open(%q) succeeded", tc.url)
			continue
		}
		if !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Errorf("Open(%q): %v does not wrap ErrInvalidArgument", tc.url, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "postgresconn: URL") || !strings.Contains(msg, tc.want) {
			t.Errorf("Open(%q): %q, want it to say %q", tc.url, msg, tc.want)
		}
		if strings.Contains(msg, "s3cret") || strings.Contains(msg, "admin") {
			t.Errorf("Open(%q): %q shows a credential", tc.url, msg)
		}
		if strings.Contains(msg, "cannot parse") {
			t.Errorf("Open(%q): %q says the URL twice", tc.url, msg)
		}
	}
}

func TestOpenMakesAPoolOnTheDatabaseWithTheSettings(t *testing.T) {
	url := pgtest.Database(t)
	for _, u := range []string{url, strings.Replace(url, "postgres://", "postgresql://", 1)} {
		pool, err := postgresconn.Config{URL: u, ConnectTimeout: 3 * time.Second, MaxConns: 2}.Open()
		if err != nil {
			t.Fatal(err)
		}
		var db string
		if err := pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&db); err != nil {
			pool.Close()
			t.Fatal(err)
		}
		cfg := pool.Config()
		addr := postgresconn.Addr(pool)
		pool.Close()
		if cfg.MaxConns != 2 || cfg.ConnConfig.ConnectTimeout != 3*time.Second {
			t.Errorf("pool of %q: max conns %d, connect timeout %v", u, cfg.MaxConns, cfg.ConnConfig.ConnectTimeout)
		}
		if want := "127.0.0.1:" + strings.Split(strings.Split(url, "@127.0.0.1:")[1], "/")[0] + "/" + db; addr != want {
			t.Errorf("Addr = %q, want %q", addr, want)
		}
	}
}

func TestAddrNamesASocketDirectoryAndAnIPv6Host(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"postgres://%2Fvar%2Frun%2Fpostgresql:5433/app", "/var/run/postgresql:5433/app"},
		{"postgres://u:pw@[::1]:5432/app", "[::1]:5432/app"},
	} {
		pool, err := postgresconn.Config{URL: tc.url}.Open()
		if err != nil {
			t.Fatal(err)
		}
		got := postgresconn.Addr(pool)
		pool.Close()
		if got != tc.want {
			t.Errorf("Addr(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
