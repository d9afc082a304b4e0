package pgchaos

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/chaoskit"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// poolSize is each node's connection pool: the node's concurrency (10)
// plus its claims, renewals, sweeps and the listener's own connection, as
// the Redis replicas' pool of 32.
const poolSize = 32

// connectTimeout bounds a dial. It is long: a cut proxy closes the
// connection and a stopped server refuses it, both at once, so a dial
// that has not answered is only slow (a backend starting on a loaded
// machine, seconds after a crash restart). The pool finishes a dial its
// caller stopped waiting for and keeps the connection; dropping it for a
// new one would start yet another backend on a machine already behind,
// until none ever starts in time.
const connectTimeout = 15 * time.Second

// worker is a worker process: a cluster node on the Postgres driver of
// the database -db (reached through the test's proxy), serving the chaos
// (chaoskit.Serve) until SIGTERM.
func worker(args []string) error {
	fs := flag.NewFlagSet("pgchaos worker", flag.ContinueOnError)
	var wf chaoskit.WorkerFlags
	wf.Register(fs)
	url := fs.String("db", "", "the database's URL, through the test's proxy")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := openPool(*url)
	if err != nil {
		return err
	}
	defer pool.Close()
	return chaoskit.Serve(wf, func(opts ...cluster.Option) (*cluster.Node, error) {
		return newNode(pool, wf.Name, opts...)
	})
}

// openPool returns a pool of poolSize connections on url that gives up a
// dial only after connectTimeout.
func openPool(url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pool config: %w", err)
	}
	cfg.MaxConns = poolSize
	// Connections kept open: a call under the node's short lease-path
	// deadline then rarely pays for a dial (a backend's start), which a
	// loaded machine can make longer than the deadline.
	cfg.MinConns = poolSize / 4
	cfg.ConnConfig.ConnectTimeout = connectTimeout
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// newNode returns a cluster node named name on the Postgres driver of
// pool, migrating the database first if it has to (pgdriver.Open). It
// tries again, as a program at start would, for up to 45 s (the chaos
// waits a minute for a worker to be ready): a worker restarted while the
// server is recovering from its own kill -9 is turned away at first.
func newNode(pool *pgxpool.Pool, name string, opts ...cluster.Option) (*cluster.Node, error) {
	deadline := time.Now().Add(45 * time.Second)
	for {
		d, err := pgdriver.Open(context.Background(), pool, pgdriver.Options{Node: name})
		if err == nil {
			return cluster.NewWithDriver(d, opts...)
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
