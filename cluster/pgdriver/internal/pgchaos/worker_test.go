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
// dial after 3 s (a cut proxy refuses at once; a loaded machine answers
// late).
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
	cfg.ConnConfig.ConnectTimeout = 3 * time.Second
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// newNode returns a cluster node named name on the Postgres driver of
// pool, migrating the database first if it has to (pgdriver.Open). On a
// loaded machine the first connections may time out: it tries again for
// up to half a minute, as a program at start would.
func newNode(pool *pgxpool.Pool, name string, opts ...cluster.Option) (*cluster.Node, error) {
	deadline := time.Now().Add(30 * time.Second)
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
