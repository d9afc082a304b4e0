package redisconn

import (
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/redis/go-redis/v9"
)

// DefaultAddr is the address when neither a flag nor the environment
// names one.
const DefaultAddr = "localhost:6379"

// The environment variables FromEnv reads.
const (
	EnvURL            = "STPE_REDIS_URL"
	EnvFallbackURL    = "REDIS_URL"
	EnvCluster        = "STPE_REDIS_CLUSTER"
	EnvSentinelMaster = "STPE_REDIS_SENTINEL_MASTER"
	EnvUsername       = "STPE_REDIS_USERNAME"
	EnvPassword       = "STPE_REDIS_PASSWORD"
)

// Config says where Redis is and how to talk to it. The zero value's
// address is empty, which Open refuses; FromEnv fills in the defaults.
type Config struct {
	// Addr is the address in one of the forms of the package doc: a
	// host:port, a redis://, rediss:// or unix:// URL, a comma-separated
	// list of a Redis Cluster's seeds, or a redis+cluster:// or
	// redis+sentinel:// URL.
	Addr string
	// Cluster makes a Redis Cluster client even of a single address.
	Cluster bool
	// SentinelMaster, if set, names the master that the sentinels at
	// Addr watch; the client follows its failovers.
	SentinelMaster string
	// Username and Password authenticate with Redis when Addr carries no
	// credentials of its own.
	Username, Password string

	// DialTimeout bounds each connection attempt (go-redis's default, 5
	// s, if 0). Every command is bounded by its context's deadline.
	DialTimeout time.Duration
	// PoolSize is the connection pool per server (go-redis's default if
	// 0).
	PoolSize int
	// MaxRetries is how often a failed command is retried (go-redis's
	// default, 3, if 0; -1 for never).
	MaxRetries int
}

// FromEnv returns the Config the environment describes (see the package
// doc), read through getenv (os.Getenv).
func FromEnv(getenv func(string) string) Config {
	c := Config{Addr: DefaultAddr}
	for _, v := range []string{EnvURL, EnvFallbackURL} {
		if a := strings.TrimSpace(getenv(v)); a != "" {
			c.Addr = a
			break
		}
	}
	switch strings.ToLower(strings.TrimSpace(getenv(EnvCluster))) {
	case "1", "true", "yes":
		c.Cluster = true
	}
	c.SentinelMaster = strings.TrimSpace(getenv(EnvSentinelMaster))
	c.Username = getenv(EnvUsername)
	c.Password = getenv(EnvPassword)
	return c
}

// RegisterFlags defines -redis, -cluster and -sentinel-master on fs,
// writing into c; c's values (FromEnv's, say) are what a flag not given
// leaves. The usage never shows those values, which may hold a password.
// It may be called on several flag sets with the same c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "redis", c.Addr, "Redis `address`: host:port; redis://[user:password@]host:port/db (rediss:// for TLS, unix:///path.sock); "+
		"host:port,host:port,... or redis+cluster://host:port?addr=host:port for a Redis Cluster; redis+sentinel://host:port?master_name=M for Sentinel. "+
		"Default $"+EnvURL+", then $"+EnvFallbackURL+", then "+DefaultAddr)
	fs.BoolVar(&c.Cluster, "cluster", c.Cluster, "the address is a Redis Cluster's, even a single seed (default $"+EnvCluster+")")
	fs.StringVar(&c.SentinelMaster, "sentinel-master", c.SentinelMaster, "the `name` of the master the sentinels at -redis watch (default $"+EnvSentinelMaster+")")
	for _, name := range []string{"redis", "cluster", "sentinel-master"} {
		fs.Lookup(name).DefValue = "" // the usage says where the default comes from
	}
	fs.Lookup("cluster").DefValue = "false"
}

// String is the address with its credentials redacted, fit to print.
func (c Config) String() string { return Redact(c.Addr) }

// configError is a Config Open cannot use: "redisconn: address A: why",
// wrapping scheduler.ErrInvalidArgument. Both parts are redacted.
type configError struct{ addr, why string }

func (e *configError) Error() string {
	return "redisconn: address " + Redact(e.addr) + ": " + Redact(e.why)
}

func (e *configError) Unwrap() error { return scheduler.ErrInvalidArgument }

// Open returns the client c describes: a *redis.ClusterClient for a
// Redis Cluster, a *redis.Client otherwise (over Sentinel, a failover
// client). It dials nothing until the first command. Every command is
// bounded by its context's deadline (ContextTimeoutEnabled). A malformed
// address is an error wrapping scheduler.ErrInvalidArgument.
func (c Config) Open() (redis.UniversalClient, error) {
	addr := strings.TrimSpace(c.Addr)
	bad := func(format string, args ...any) error {
		return &configError{addr: addr, why: fmt.Sprintf(format, args...)}
	}
	if addr == "" {
		return nil, bad("empty")
	}
	scheme, _, hasScheme := strings.Cut(addr, "://")
	scheme = strings.ToLower(scheme)
	seeds := strings.Split(addr, ",")
	if len(seeds) > 1 && hasScheme {
		return nil, bad("a list of addresses takes host:port items; give a URL's further addresses as addr= parameters (redis+cluster://host:port?addr=host:port)")
	}
	if !hasScheme {
		for _, s := range seeds {
			if _, _, err := net.SplitHostPort(strings.TrimSpace(s)); err != nil {
				return nil, bad("%q is not host:port", strings.TrimSpace(s))
			}
		}
	}
	sentinel := c.SentinelMaster != "" || strings.HasSuffix(scheme, "+sentinel")
	cluster := c.Cluster || strings.HasSuffix(scheme, "+cluster") || (len(seeds) > 1 && !sentinel)
	switch {
	case sentinel && cluster:
		return nil, bad("both Redis Cluster and Sentinel: choose one")
	case sentinel:
		return c.openSentinel(addr, seeds, hasScheme, bad)
	case cluster:
		return c.openCluster(addr, seeds, hasScheme, bad)
	default:
		return c.openServer(addr, hasScheme, bad)
	}
}

// openServer makes a client of one server.
func (c Config) openServer(addr string, hasScheme bool, bad func(string, ...any) error) (redis.UniversalClient, error) {
	opts := &redis.Options{Addr: addr}
	if hasScheme {
		o, err := redis.ParseURL(addr)
		if err != nil {
			return nil, bad("%v", err)
		}
		opts = o
	}
	if opts.Username == "" && opts.Password == "" {
		opts.Username, opts.Password = c.Username, c.Password
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = c.DialTimeout
	opts.PoolSize = c.PoolSize
	opts.MaxRetries = c.MaxRetries
	return redis.NewClient(opts), nil
}

// openCluster makes a Redis Cluster client.
func (c Config) openCluster(addr string, seeds []string, hasScheme bool, bad func(string, ...any) error) (redis.UniversalClient, error) {
	opts := &redis.ClusterOptions{}
	if hasScheme {
		scheme, rest := baseScheme(addr, "+cluster")
		if scheme != "redis" && scheme != "rediss" {
			return nil, bad("a Redis Cluster is reached by redis:// or rediss:// (or redis+cluster://), not %s://", scheme)
		}
		o, err := redis.ParseClusterURL(scheme + "://" + rest)
		if err != nil {
			return nil, bad("%v", err)
		}
		opts = o
	} else {
		for _, s := range seeds {
			opts.Addrs = append(opts.Addrs, strings.TrimSpace(s))
		}
	}
	if opts.Username == "" && opts.Password == "" {
		opts.Username, opts.Password = c.Username, c.Password
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = c.DialTimeout
	opts.PoolSize = c.PoolSize
	opts.MaxRetries = c.MaxRetries
	return redis.NewClusterClient(opts), nil
}

// openSentinel makes a client of the master the sentinels watch.
func (c Config) openSentinel(addr string, seeds []string, hasScheme bool, bad func(string, ...any) error) (redis.UniversalClient, error) {
	opts := &redis.FailoverOptions{}
	if hasScheme {
		scheme, rest := baseScheme(addr, "+sentinel")
		if scheme != "redis" && scheme != "rediss" {
			return nil, bad("sentinels are reached by redis:// or rediss:// (or redis+sentinel://), not %s://", scheme)
		}
		o, err := redis.ParseFailoverURL(scheme + "://" + rest)
		if err != nil {
			return nil, bad("%v", err)
		}
		opts = o
	} else {
		for _, s := range seeds {
			opts.SentinelAddrs = append(opts.SentinelAddrs, strings.TrimSpace(s))
		}
	}
	if c.SentinelMaster != "" {
		opts.MasterName = c.SentinelMaster
	}
	if opts.MasterName == "" {
		return nil, bad("no master name: give -sentinel-master NAME or master_name= in the URL")
	}
	if opts.Username == "" && opts.Password == "" {
		opts.Username, opts.Password = c.Username, c.Password
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = c.DialTimeout
	opts.PoolSize = c.PoolSize
	opts.MaxRetries = c.MaxRetries
	return redis.NewFailoverClient(opts), nil
}

// baseScheme splits a URL into its scheme, lower-cased and without the
// layout suffix (+cluster, +sentinel), and what follows "://".
func baseScheme(addr, suffix string) (scheme, rest string) {
	scheme, rest, _ = strings.Cut(addr, "://")
	return strings.TrimSuffix(strings.ToLower(scheme), suffix), rest
}
