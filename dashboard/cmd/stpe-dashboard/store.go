package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
)

// The inspection node (never started, so it claims and runs nothing) on
// the store the flags name, with the number of partitions the store
// records: a Redis keyspace under -prefix, or a PostgreSQL database.

// layoutTimeout bounds the read of the store's recorded partitions.
const layoutTimeout = 5 * time.Second

// openNode makes the inspection node, and the function that closes its
// store's client. A bad address is an error wrapping
// scheduler.ErrInvalidArgument; a store that does not answer is logged,
// and the node made with the default partitions (the pages then say what
// fails).
func openNode(ctx context.Context, o options, logger *slog.Logger) (*cluster.Node, func(), error) {
	rctx, cancel := context.WithTimeout(ctx, layoutTimeout)
	defer cancel()
	if o.postgres {
		return openPostgresNode(rctx, o, logger)
	}
	rdb, err := o.conn.Open()
	if err != nil {
		return nil, nil, err
	}
	parts, err := cluster.RecordedPartitions(rctx, rdb, o.prefix)
	if errors.Is(err, cluster.ErrLayout) {
		_ = rdb.Close()
		return nil, nil, err
	}
	if err != nil || parts == 0 {
		if err != nil {
			logger.Warn("stpe-dashboard: reading the keyspace's layout failed; using the default partitions", "err", err)
		}
		parts = cluster.DefaultPartitions
	}
	node, err := cluster.New(rdb, cluster.WithPrefix(o.prefix), cluster.WithPartitions(parts),
		cluster.WithConcurrency(1), cluster.WithLogger(logger))
	if err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	return node, func() { _ = rdb.Close() }, nil
}

// openPostgresNode makes the inspection node on the Postgres driver. It
// migrates nothing: a database without the cluster's tables is for
// "stpectl migrate" (or a node's pgdriver.Open) to prepare.
func openPostgresNode(ctx context.Context, o options, logger *slog.Logger) (*cluster.Node, func(), error) {
	pg := o.pg
	pg.ConnectTimeout = layoutTimeout
	pool, err := pg.Open()
	if err != nil {
		return nil, nil, err
	}
	drv, _, err := postgresconn.RecordedDriver(ctx, pool)
	switch {
	case drv == nil:
		pool.Close()
		return nil, nil, err
	case err != nil:
		logger.Warn("stpe-dashboard: reading the database's layout failed; using the default partitions",
			"postgres", postgresconn.Addr(pool), "err", err)
	}
	node, err := cluster.NewWithDriver(drv, cluster.WithConcurrency(1), cluster.WithLogger(logger))
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return node, pool.Close, nil
}
