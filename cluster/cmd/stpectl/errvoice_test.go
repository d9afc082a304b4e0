package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

func TestEveryErrorIsSaidOnceInStpectlsVoice(t *testing.T) {
	f := failure{what: "retry 42", addr: "10.0.0.1:6379", timeout: 10 * time.Second}
	refusedAddr, _ := net.ResolveTCPAddr("tcp", "10.0.0.2:7001")
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Addr: refusedAddr, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		err  error
		f    failure
		want string
	}{
		{fmt.Errorf("cluster: retry 42: no such task: %w", cluster.ErrNotFound), f, "stpectl: retry 42: no such task"},
		{fmt.Errorf("cluster: migrate: %w", fmt.Errorf("cluster: layout: recorded with 8 partitions: %w", cluster.ErrLayout)), f,
			"stpectl: retry 42: recorded with 8 partitions: keyspace layout mismatch"},
		{refused(cluster.ErrNotFound, "no such task"), f, "stpectl: retry 42: no such task"},
		{fmt.Errorf("cluster: counts by kind: %w", dialErr), f, "stpectl: retry 42: redis 10.0.0.2:7001: connect: connection refused"},
		{fmt.Errorf("cluster: list pending: %w", context.DeadlineExceeded), failure{what: "list", addr: "h:1", timeout: time.Second, timedOut: true},
			"stpectl: list: redis h:1: i/o timeout (no answer within -timeout 1s)"},
		{fmt.Errorf("cluster: members: %w", redis.ErrClosed), f, "stpectl: retry 42: redis 10.0.0.1:6379: redis: client is closed"},
		{errors.New("cluster: counts: WRONGPASS invalid username-password pair"), failure{what: "counts", addr: "redis://***@h:1/0"},
			"stpectl: counts: redis redis://***@h:1/0: WRONGPASS invalid username-password pair"},
		{&hinted{err: fmt.Errorf("cluster: migrate: %w", context.DeadlineExceeded), hint: "run it again"},
			failure{what: "migrate", addr: "h:1", timeout: time.Second, timedOut: true},
			"stpectl: migrate: redis h:1: i/o timeout (no answer within -timeout 1s) (run it again)"},
		{usagef("list: -limit 0: want 1 to 1000"), f, "stpectl: list: -limit 0: want 1 to 1000"},
		{errors.New("cluster: counts by kind: redis 10.0.0.9:6379: redis: can't parse map reply"), f,
			"stpectl: retry 42: redis 10.0.0.9:6379: redis: can't parse map reply"},
		{fmt.Errorf("cluster: list pending: redis 10.0.0.9:6379: %w", context.DeadlineExceeded), failure{what: "list", addr: "h:1", timeout: time.Second, timedOut: true},
			"stpectl: list: redis 10.0.0.9:6379: i/o timeout (no answer within -timeout 1s)"},
		{errors.New("dial redis://u:s3cret@h:1: refused"), f, "stpectl: retry 42: redis 10.0.0.1:6379: dial redis://***@h:1: refused"},
	} {
		if got := tc.f.message(tc.err); got != tc.want {
			t.Errorf("message(%v)\n got %q\nwant %q", tc.err, got, tc.want)
		}
	}
}

// TestPostgresErrorsAreSaidOnceWithoutTheUser feeds the voice pgx's own
// errors, made by a real server: a connection refused, a database that is
// not there, a statement refused; each said "postgres ADDR: CAUSE", once,
// without pgx's layers that name the user.
func TestPostgresErrorsAreSaidOnceWithoutTheUser(t *testing.T) {
	srv := postgresServer(t)
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	connectErr := func(url string) error {
		t.Helper()
		c, err := pgx.Connect(ctx, url)
		if err == nil {
			c.Close(ctx)
			t.Fatalf("connected to %s", url)
		}
		return err
	}
	url := pgDatabase(t, false)
	pool := pgPool(t, url)
	_, stmtErr := pool.Exec(ctx, "SELECT * FROM stpe_tasks")
	at := fmt.Sprintf("127.0.0.1:%d/app", srv.Port)
	f := failure{what: "counts", store: "postgres", addr: at, timeout: 10 * time.Second}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("cluster: counts by kind: %w", connectErr(fmt.Sprintf("postgres://opsalice@127.0.0.1:%d/app?sslmode=disable", closedPort))),
			fmt.Sprintf("stpectl: counts: postgres 127.0.0.1:%d: connect: connection refused", closedPort)},
		{fmt.Errorf("cluster: counts by kind: %w", connectErr(strings.Replace(srv.URL("nodb"), "postgres@", "opsalice@", 1))),
			"stpectl: counts: postgres " + at + `: FATAL: role "opsalice" does not exist (SQLSTATE 28000)`},
		{fmt.Errorf("cluster: counts by kind: %w", connectErr(srv.URL("nodb"))),
			"stpectl: counts: postgres " + at + `: FATAL: database "nodb" does not exist (SQLSTATE 3D000)`},
		{fmt.Errorf("cluster: counts by kind: %w", stmtErr),
			"stpectl: counts: postgres " + at + `: ERROR: relation "stpe_tasks" does not exist (SQLSTATE 42P01)`},
		{errors.New("cluster: counts: failed to connect to `user=opsalice database=app`: 10.0.0.1:5432 (db): tls error: bad certificate"),
			"stpectl: counts: postgres " + at + ": tls error: bad certificate"},
	} {
		got := f.message(tc.err)
		if got != tc.want {
			t.Errorf("message(%v)\n got %q\nwant %q", tc.err, got, tc.want)
		}
		if strings.Contains(got, "user=") {
			t.Errorf("message(%v) names the user: %q", tc.err, got)
		}
	}
	// A node on a driver names its store by the driver's Addr: said once.
	named := failure{what: "show t1", store: "postgres", addr: at, named: "pg " + at}
	if got, want := named.message(fmt.Errorf("cluster: get t1: pg %s: %w", at, errors.New("conn closed"))), "stpectl: show t1: postgres "+at+": conn closed"; got != want {
		t.Errorf("named store:\n got %q\nwant %q", got, want)
	}
}
