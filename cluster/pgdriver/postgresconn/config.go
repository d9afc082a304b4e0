package postgresconn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL is the environment variable FromEnv reads.
const EnvURL = "STPE_POSTGRES_URL"

// Config says where PostgreSQL is and how to talk to it. The zero value
// has no URL: a tool that finds none uses Redis.
type Config struct {
	// URL is a postgres:// or postgresql:// URL (see the package doc).
	URL string
	// ConnectTimeout bounds each connection attempt (none but the
	// context's deadline if 0, unless the URL's connect_timeout says).
	ConnectTimeout time.Duration
	// MaxConns is the pool's size (pgxpool's default if 0).
	MaxConns int32
}

// FromEnv returns the Config the environment describes (see the package
// doc), read through getenv (os.Getenv).
func FromEnv(getenv func(string) string) Config {
	return Config{URL: strings.TrimSpace(getenv(EnvURL))}
}

// RegisterFlags defines -postgres on fs, writing into c; c's URL
// (FromEnv's, say) is what the flag leaves when not given. The usage
// never shows that value, which may hold a password. It may be called on
// several flag sets with the same c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.URL, "postgres", c.URL, "PostgreSQL `URL`: postgres://[user:password@]host:port/database[?sslmode=...] (postgresql:// too); "+
		"the tasks are then in that database instead of Redis. Default $"+EnvURL)
	fs.Lookup("postgres").DefValue = "" // the usage says where the default comes from
}

// String is the URL with its credentials redacted, fit to print.
func (c Config) String() string { return redisconn.Redact(c.URL) }

// configError is a Config Open cannot use: "postgresconn: URL U: why"
// ("postgresconn: URL: empty"),
// wrapping scheduler.ErrInvalidArgument. Both parts are redacted.
type configError struct{ url, why string }

func (e *configError) Error() string {
	url := ""
	if e.url != "" {
		url = " " + redisconn.Redact(e.url)
	}
	return "postgresconn: URL" + url + ": " + redisconn.Redact(e.why)
}

func (e *configError) Unwrap() error { return scheduler.ErrInvalidArgument }

// IsURL reports whether s is a postgres:// or postgresql:// URL (the
// scheme in lower case, as libpq and pgx read it).
func IsURL(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open returns a pool on the database c names. It connects to nothing
// until the first statement (a server that does not answer is the first
// statement's error). An empty or malformed URL, or one of another
// scheme, is an error wrapping scheduler.ErrInvalidArgument.
func (c Config) Open() (*pgxpool.Pool, error) {
	url := strings.TrimSpace(c.URL)
	bad := func(format string, args ...any) error {
		return &configError{url: url, why: fmt.Sprintf(format, args...)}
	}
	switch {
	case url == "":
		return nil, bad("empty")
	case !strings.Contains(url, "://") && strings.Contains(url, "="):
		// Keywords (host=h user=u ...) are not echoed: Redact knows
		// their password, not every other value an operator may deem
		// secret.
		return nil, &configError{url: "(keywords)", why: "want a postgres:// or postgresql:// URL, not a connection string of keywords"}
	case !IsURL(url):
		return nil, bad("want a postgres:// or postgresql:// URL")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, bad("%s", parseWhy(err))
	}
	if c.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = c.ConnectTimeout
	}
	if c.MaxConns > 0 {
		cfg.MaxConns = c.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, bad("%v", err)
	}
	return pool, nil
}

// parseWhy is a parse error's cause without pgx's "cannot parse `URL`: ",
// which would repeat the URL.
func parseWhy(err error) string {
	var pe *pgconn.ParseConfigError
	msg := err.Error()
	if errors.As(err, &pe) {
		if _, rest, ok := strings.Cut(msg, "`: "); ok {
			return rest
		}
	}
	return msg
}

// Addr names the server and database of pool, "host:port/database",
// without credentials: what messages about the database say.
func Addr(pool *pgxpool.Pool) string {
	cc := pool.Config().ConnConfig
	port := strconv.Itoa(int(cc.Port))
	if strings.HasPrefix(cc.Host, "/") { // a Unix socket's directory
		return cc.Host + ":" + port + "/" + cc.Database
	}
	return net.JoinHostPort(cc.Host, port) + "/" + cc.Database
}
