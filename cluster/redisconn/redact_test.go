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

func TestRedactCoversMistypedSchemes(t *testing.T) {
	if got := redisconn.Redact("ftp://u:s3cret@h:1 and rdis://u:s3cret@h:2"); strings.Contains(got, "s3cret") {
		t.Fatalf("Redact kept a password: %q", got)
	}
}
