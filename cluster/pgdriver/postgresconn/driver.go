package postgresconn

import (
	"context"
	"errors"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Driver returns the Postgres driver of a store on pool with partitions
// partitions (pgdriver.New, pgdriver.NewDriver), as the cluster's
// NewWithDriver takes it. It migrates nothing: a tool that reads a store
// must not change its schema unasked. A bad number of partitions is an
// error wrapping scheduler.ErrInvalidArgument.
func Driver(pool *pgxpool.Pool, partitions int) (driver.Driver, error) {
	st, err := pgdriver.New(pool, pgdriver.Options{Partitions: partitions})
	if err != nil {
		return nil, err
	}
	d, err := pgdriver.NewDriver(st)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// RecordedDriver returns Driver of pool with the number of partitions
// the store's layout records, so that a tool reads the store as its nodes
// made it; with no record yet (no node started on it), the driver of
// pgdriver.DefaultPartitions and recorded false. A record the driver
// cannot read (another layout version, a number that is not one) is an
// error wrapping driver.ErrLayout, and no driver. Any other error (the
// database does not answer, has no tables yet) is returned with the
// driver of the default partitions, so that a caller may go on and let
// its own first statement report the database.
func RecordedDriver(ctx context.Context, pool *pgxpool.Pool) (drv driver.Driver, recorded bool, err error) {
	drv, err = Driver(pool, pgdriver.DefaultPartitions)
	if err != nil {
		return nil, false, err
	}
	n, err := drv.RecordedPartitions(ctx)
	switch {
	case errors.Is(err, driver.ErrLayout):
		return nil, false, err
	case err != nil:
		return drv, false, err
	case n == 0:
		return drv, false, nil
	case n == drv.Partitions():
		return drv, true, nil
	}
	drv, err = Driver(pool, n)
	if err != nil {
		return nil, false, err
	}
	return drv, true, nil
}
