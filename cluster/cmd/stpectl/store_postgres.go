package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgStore is a PostgreSQL database holding the cluster's tables (package
// pgdriver): the database, and the schema its search_path finds, are the
// keyspace, so -prefix has no part in it.
type pgStore struct {
	pool *pgxpool.Pool
	conn postgresconn.Config
	// schema is the database's schema version, as newNode read it, and
	// schemaErr why it could not be read.
	schema    int
	schemaErr error
	// driverAddr is the driver's Addr, which the node's errors name.
	driverAddr string
}

// openPostgres makes the pool conn describes, tuned for a tool: a few
// connections, each attempt bounded by the command's timeout (5 s at
// most). It connects to nothing yet.
func openPostgres(conn postgresconn.Config, timeout time.Duration) (*pgStore, error) {
	conn.ConnectTimeout = min(timeout, 5*time.Second)
	conn.MaxConns = 4
	pool, err := conn.Open()
	if err != nil {
		// "postgresconn: URL U: why", U redacted, said as the flag.
		return nil, &usageError{msg: "stpectl: " + strings.Replace(err.Error(), "postgresconn: URL", "-postgres", 1)}
	}
	return &pgStore{pool: pool, conn: conn}, nil
}

func (p *pgStore) name() string  { return "postgres" }
func (p *pgStore) given() string { return p.conn.String() }
func (p *pgStore) addr() string  { return postgresconn.Addr(p.pool) }
func (p *pgStore) close()        { p.pool.Close() }
func (p *pgStore) named() string { return p.driverAddr }

// newNode makes the node on the Postgres driver with the number of
// partitions the store records; a database without the cluster's tables
// records none, and is not asked. A database that does not answer, or
// has no tables yet, is left to the command (and checkKeyspace).
func (p *pgStore) newNode(ctx context.Context, _ string, logger *slog.Logger) (*cluster.Node, bool, error) {
	p.schema, p.schemaErr = pgdriver.SchemaVersion(ctx, p.pool)
	var drv driver.Driver
	recorded := false
	var err error
	if p.schemaErr == nil && p.schema == 0 {
		drv, err = postgresconn.Driver(p.pool, pgdriver.DefaultPartitions)
	} else {
		drv, recorded, err = postgresconn.RecordedDriver(ctx, p.pool)
	}
	if drv == nil {
		if errors.Is(err, cluster.ErrLayout) {
			return nil, false, refused(cluster.ErrLayout, "postgres %s: %s", p.addr(), clusterWhy(err.Error()))
		}
		return nil, false, err
	}
	p.driverAddr = drv.Addr()
	node, err := cluster.NewWithDriver(drv, cluster.WithConcurrency(1), cluster.WithLogger(logger))
	return node, !recorded, err
}

// checkKeyspace refuses a database without the cluster's tables, or with
// an older schema than this stpectl reads, saying to run migrate. A
// database that cannot be reached is left to the command.
func (p *pgStore) checkKeyspace(_ context.Context, s *session) error {
	v, err := p.schema, p.schemaErr // as newNode read it
	if err != nil {
		return nil
	}
	latest := pgdriver.LatestVersion()
	switch {
	case v == 0:
		return refused(errNoKeyspace, "no keyspace in postgres %s: the database has none of the cluster's tables; run \"stpectl migrate\" on it first", s.addr)
	case v < latest:
		return refused(cluster.ErrLayout, "postgres %s: the cluster's tables are at schema version %d, this stpectl reads version %d; run \"stpectl migrate\" once the nodes of the earlier version are stopped", s.addr, v, latest)
	}
	return nil
}

// ping measures the server's round trip and reads its version.
func (p *pgStore) ping(ctx context.Context, doc *healthJSON) error {
	doc.Postgres = p.given()
	// The first ping dials; the second measures the round trip alone.
	for range 2 {
		start := time.Now()
		if err := p.pool.Ping(ctx); err != nil {
			return err
		}
		doc.RoundTripMicros = time.Since(start).Microseconds()
	}
	if err := p.pool.QueryRow(ctx, "SHOW server_version").Scan(&doc.PostgresVersion); err != nil {
		return fmt.Errorf("read the server's version: %w", err)
	}
	return nil
}
