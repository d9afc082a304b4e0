package redisconn_test

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/redis/go-redis/v9"
)

// env is a getenv of a fixed environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestFromEnvReadsTheVariablesInOrder(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want redisconn.Config
	}{
		{nil, redisconn.Config{Addr: redisconn.DefaultAddr}},
		{map[string]string{"REDIS_URL": "redis://r:1"}, redisconn.Config{Addr: "redis://r:1"}},
		{map[string]string{"REDIS_URL": "redis://r:1", "STPE_REDIS_URL": " s:2 "}, redisconn.Config{Addr: "s:2"}},
		{map[string]string{"STPE_REDIS_CLUSTER": "1", "STPE_REDIS_PASSWORD": "pw", "STPE_REDIS_USERNAME": "u"},
			redisconn.Config{Addr: redisconn.DefaultAddr, Cluster: true, Username: "u", Password: "pw"}},
		{map[string]string{"STPE_REDIS_CLUSTER": "true", "STPE_REDIS_SENTINEL_MASTER": "m"},
			redisconn.Config{Addr: redisconn.DefaultAddr, Cluster: true, SentinelMaster: "m"}},
		{map[string]string{"STPE_REDIS_CLUSTER": "0"}, redisconn.Config{Addr: redisconn.DefaultAddr}},
	} {
		if got := redisconn.FromEnv(env(tc.vars)); got != tc.want {
			t.Errorf("FromEnv(%v) = %+v, want %+v", tc.vars, got, tc.want)
		}
	}
}

func TestFlagsOverrideTheEnvironmentAndTheirUsageShowsNoSecret(t *testing.T) {
	c := redisconn.FromEnv(env(map[string]string{"STPE_REDIS_URL": "redis://admin:s3cret@h:1/0", "STPE_REDIS_CLUSTER": "1"}))
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var usage strings.Builder
	fs.SetOutput(&usage)
	c.RegisterFlags(fs)
	fs.PrintDefaults()
	if strings.Contains(usage.String(), "s3cret") || strings.Contains(usage.String(), "admin") {
		t.Fatalf("usage shows the environment's credentials:\n%s", usage.String())
	}
	if c.Addr != "redis://admin:s3cret@h:1/0" || !c.Cluster {
		t.Fatalf("registering changed the values: %+v", c)
	}
	if err := fs.Parse([]string{"-redis", "a:1,b:2", "-sentinel-master", "m"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "a:1,b:2" || c.SentinelMaster != "m" || !c.Cluster {
		t.Fatalf("after the flags: %+v", c)
	}
}

// open opens c and fails t on an error; the client is closed when t ends.
func open(t *testing.T, c redisconn.Config) redis.UniversalClient {
	t.Helper()
	rdb, err := c.Open()
	if err != nil {
		t.Fatalf("Open(%+v): %v", c, err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func TestOpenChoosesTheClientOfTheLayout(t *testing.T) {
	single := func(rdb redis.UniversalClient) *redis.Options {
		c, ok := rdb.(*redis.Client)
		if !ok {
			t.Fatalf("%T, want *redis.Client", rdb)
		}
		return c.Options()
	}
	clustered := func(rdb redis.UniversalClient) *redis.ClusterOptions {
		c, ok := rdb.(*redis.ClusterClient)
		if !ok {
			t.Fatalf("%T, want *redis.ClusterClient", rdb)
		}
		return c.Options()
	}

	o := single(open(t, redisconn.Config{Addr: "h:1", Password: "envpw", PoolSize: 3, MaxRetries: -1}))
	if o.Addr != "h:1" || o.Password != "envpw" || o.PoolSize != 3 || o.MaxRetries != 0 || !o.ContextTimeoutEnabled {
		t.Fatalf("host:port: %+v", o)
	}
	o = single(open(t, redisconn.Config{Addr: "redis://u:urlpw@h:2/3", Password: "envpw"}))
	if o.Addr != "h:2" || o.DB != 3 || o.Username != "u" || o.Password != "urlpw" {
		t.Fatalf("URL (its own credentials win): %+v", o)
	}
	o = single(open(t, redisconn.Config{Addr: "unix:///tmp/r.sock?db=2"}))
	if o.Network != "unix" || o.Addr != "/tmp/r.sock" || o.DB != 2 {
		t.Fatalf("unix URL: %+v", o)
	}
	co := clustered(open(t, redisconn.Config{Addr: "a:7000, b:7001", Password: "envpw"}))
	if strings.Join(co.Addrs, " ") != "a:7000 b:7001" || co.Password != "envpw" {
		t.Fatalf("seeds: %+v", co)
	}
	co = clustered(open(t, redisconn.Config{Addr: "a:7000", Cluster: true}))
	if strings.Join(co.Addrs, " ") != "a:7000" {
		t.Fatalf("-cluster with one seed: %+v", co)
	}
	co = clustered(open(t, redisconn.Config{Addr: "redis+cluster://:pw@a:7000?addr=b:7001&addr=c:7002"}))
	if strings.Join(co.Addrs, " ") != "a:7000 b:7001 c:7002" || co.Password != "pw" {
		t.Fatalf("redis+cluster URL: %+v", co)
	}
	co = clustered(open(t, redisconn.Config{Addr: "rediss://a:7000", Cluster: true}))
	if co.TLSConfig == nil {
		t.Fatalf("rediss with -cluster: no TLS: %+v", co)
	}
	// A failover client is a *redis.Client whose address the sentinels give.
	single(open(t, redisconn.Config{Addr: "s1:26379,s2:26379", SentinelMaster: "m"}))
	single(open(t, redisconn.Config{Addr: "redis+sentinel://s1:26379?master_name=m&addr=s2:26379"}))
}

func TestOpenRefusesAMalformedAddressWithoutShowingItsPassword(t *testing.T) {
	for _, tc := range []struct {
		c    redisconn.Config
		want string
	}{
		{redisconn.Config{}, "empty"},
		{redisconn.Config{Addr: "redis://:s3cret@h:1/notadb"}, "invalid database number"},
		{redisconn.Config{Addr: "redis://:s3cret@h:1/0?addr=g:2"}, "unexpected option: addr"},
		{redisconn.Config{Addr: "ftp://:s3cret@h:1"}, "invalid URL scheme"},
		{redisconn.Config{Addr: "redis://:s3cret@h:1,g:2"}, "a list of addresses takes host:port items"},
		{redisconn.Config{Addr: "a:1,nohostport"}, `"nohostport" is not host:port`},
		{redisconn.Config{Addr: "a:1", Cluster: true, SentinelMaster: "m"}, "choose one"},
		{redisconn.Config{Addr: "redis+sentinel://:s3cret@s:1"}, "no master name"},
		{redisconn.Config{Addr: "unix+cluster://:s3cret@/tmp/s"}, "not unix://"},
		{redisconn.Config{Addr: "redis://:s3cret@h:badport/0"}, "invalid port"},
	} {
		_, err := tc.c.Open()
		if err == nil {
			t.Errorf("Open(%q): no error", redisconn.Redact(tc.c.Addr))
			continue
		}
		if !errors.Is(err, scheduler.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "redisconn: address ") ||
			!strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q): %v; want %q, ErrInvalidArgument, no password", redisconn.Redact(tc.c.Addr), err, tc.want)
		}
	}
}
