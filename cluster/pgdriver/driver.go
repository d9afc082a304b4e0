package pgdriver

import "context"

// Driver is the cluster's Postgres driver: driver.Driver on a Store, each
// method with its group's rule and signature (the conformance suite
// checks them), so that cluster.NewWithDriver runs a node on it. It is
// safe for concurrent use.
type Driver struct {
	st    *Store
	purge *purger // paces the purge of what expired (driver_purge.go)
}

// NewDriver returns the driver of st.
func NewDriver(st *Store) (*Driver, error) {
	if st == nil {
		return nil, invalid("postgres driver", "nil store")
	}
	return &Driver{st: st, purge: &purger{every: st.purgeEvery, batch: purgeBatch, batches: purgeMaxBatches}}, nil
}

// Store is the store the driver runs on.
func (d *Driver) Store() *Store { return d.st }

// Partitions is the number of partitions of the driver's store.
func (d *Driver) Partitions() int { return d.st.Partitions() }

// ping checks that the database answers.
func (d *Driver) ping(ctx context.Context) error {
	if err := d.st.pool.Ping(ctx); err != nil {
		return failed("ping", err)
	}
	return nil
}
