package redisconn_test

import (
	"strings"
	"testing"

	"github.com/go-stpe/scheduler/cluster/redisconn"
)

func TestRedactRemovesEveryRedisURLsCredentials(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://:s3cret@127.0.0.1:6392/0", "redis://***@127.0.0.1:6392/0"},
		{"redis://alice:s3cret@db:6379", "redis://***@db:6379"},
		{"REDISS://alice:s3cret@db:6379", "REDISS://***@db:6379"},
		{"redis+cluster://alice:s3cret@a:7000?addr=b:7001", "redis+cluster://***@a:7000?addr=b:7001"},
		{"redis+sentinel://u:p@s:26379?master_name=m&password=s3cret&x=1", "redis+sentinel://***@s:26379?master_name=m&password=***&x=1"},
		{"redis://s:26379?sentinel_password=s3cret", "redis://s:26379?sentinel_password=***"},
		{"unix://alice:s3cret@/tmp/redis.sock?db=1", "unix://***@/tmp/redis.sock?db=1"},
		{"redis://al:p@ss@word@db:6379/0", "redis://***@db:6379/0"}, // an "@" in the password
		{`dial "redis://:s3cret@h:1/0" and "redis://u:v@g:2": refused`, `dial "redis://***@h:1/0" and "redis://***@g:2": refused`},
		{"two: redis://:a@h:1 redis://:b@g:2", "two: redis://***@h:1 redis://***@g:2"},
		{"127.0.0.1:6379", "127.0.0.1:6379"},
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"mail to bob@example.com", "mail to bob@example.com"},
		{"", ""},
	} {
		if got := redisconn.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactLeavesNoPasswordOfAURLInAnyText(t *testing.T) {
	for _, pw := range []string{"s3cret", "p@ss", "a:b", "%40x"} {
		in := "connect redis://admin:" + pw + "@10.0.0.1:6379/2: refused"
		got := redisconn.Redact(in)
		if strings.Contains(got, pw) || strings.Contains(got, "admin") {
			t.Errorf("Redact(%q) = %q keeps a credential", in, got)
		}
	}
}

func TestRedactRemovesEveryPostgresURLsAndConnectionStringsCredentials(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://alice:s3cret@db:5432/app", "postgres://***@db:5432/app"},
		{"postgresql://alice:s3cret@db/app?sslmode=require", "postgresql://***@db/app?sslmode=require"},
		{"POSTGRES://alice@db/app", "POSTGRES://***@db/app"},
		{"postgres://db/app?user=alice&password=s3cret&sslmode=verify-full", "postgres://db/app?user=***&password=***&sslmode=verify-full"},
		{"postgres://db/app?sslpassword=s3cret", "postgres://db/app?sslpassword=***"},
		{"postgres://a:p@ss@db,db2:5433/app", "postgres://***@db,db2:5433/app"}, // an "@" in the password, two hosts
		{"host=db user=alice password=s3cret dbname=app", "host=db user=*** password=*** dbname=app"},
		{"failed to connect to `user=alice database=app`: refused", "failed to connect to `user=*** database=app`: refused"},
		{"password=s3cret host=db", "password=*** host=db"},
		{"host=db password = s3cret", "host=db password = ***"},
		{`host=db password='s3 cr\'et' dbname=app`, "host=db password=*** dbname=app"},
		{"host=db sslpassword=s3cret", "host=db sslpassword=***"},
		{"cannot parse `host=db password=s3cret`: bad", "cannot parse `host=db password=***`: bad"},
		{"postgres://db:5432/app", "postgres://db:5432/app"},
		{"password authentication failed for user \"alice\"", "password authentication failed for user \"alice\""},
	} {
		if got := redisconn.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactLeavesNoPasswordOfAPostgresURLInAnyText(t *testing.T) {
	for _, pw := range []string{"s3cret", "p@ss", "a:b", "%40x", "x%2Fy"} {
		for _, in := range []string{
			"connect postgres://admin:" + pw + "@10.0.0.1:5432/app: refused",
			"connect postgresql://10.0.0.1/app?password=" + pw + "&user=admin: refused",
			"connect `host=10.0.0.1 user=admin password=" + pw + "`: refused",
		} {
			got := redisconn.Redact(in)
			if strings.Contains(got, pw) || strings.Contains(got, "admin") {
				t.Errorf("Redact(%q) = %q keeps a credential", in, got)
			}
		}
	}
}

func TestRedactCoversMistypedSchemes(t *testing.T) {
	if got := redisconn.Redact("ftp://u:s3cret@h:1 and rdis://u:s3cret@h:2"); strings.Contains(got, "s3cret") {
		t.Fatalf("Redact kept a password: %q", got)
	}
}

func TestRedactingWriterRedactsEachWriteAndCountsWhatItWasGiven(t *testing.T) {
	var out strings.Builder
	w := redisconn.RedactingWriter(&out)
	line := "dial postgres://ops:s3cret@db/app?sslmode=disable: refused\n"
	n, err := w.Write([]byte(line))
	if err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}
	if _, err := w.Write([]byte("level=WARN err=\"redis://:pw@h:1 down\"\n")); err != nil {
		t.Fatal(err)
	}
	if want := "dial postgres://***@db/app?sslmode=disable: refused\nlevel=WARN err=\"redis://***@h:1 down\"\n"; out.String() != want {
		t.Fatalf("wrote %q, want %q", out.String(), want)
	}
}
