package pgdriver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// The Coordination group of driver.Driver (cluster/driver/coordination.go):
// readying the database (CheckLayout, Prepare, RecordedPartitions) here;
// membership and periodic declarations in driver_members.go; cursors and
// periodic states in driver_periodic.go; notices in driver_subscribe.go.

// layoutVersion is the version of the layout the driver reads, recorded in
// stpe_layout by the first node that checks it. The schema itself is
// versioned by the migrations (stpe_migrations).
const layoutVersion = "pg1"

// layoutRecord names where the layout is recorded, for LayoutError.
const layoutRecord = "table stpe_layout"

// Addr names the driver's database as host:port/database, without
// credentials, for errors and logs.
func (d *Driver) Addr() string {
	cfg := d.st.pool.Config().ConnConfig
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))) + "/" + cfg.Database
}

// CheckLayout makes sure the database is migrated to this package's
// schema (an older one, or none, is an error wrapping driver.ErrLayout
// that says to run Migrate; a newer one is accepted, since migrations only
// add), then records the layout version and the driver's number of
// partitions if none is recorded, in one statement: a database recorded
// with another number of partitions, or another layout version, is a
// *driver.LayoutError. The statement returns the record as it is once
// written: a node that checks while another records a fresh database's
// layout waits for that record's commit and reads it (the conflict's
// update locks the row and returns its latest version; a read of the
// table would see the statement's snapshot, taken before the record).
// River checks its schema's migration version so before it starts.
func (d *Driver) CheckLayout(ctx context.Context) error {
	have, err := SchemaVersion(ctx, d.st.pool)
	if err != nil {
		return err
	}
	if want := LatestVersion(); have < want {
		return &schemaError{have: have, want: want}
	}
	var version string
	var parts int
	err = d.st.pool.QueryRow(ctx, `
INSERT INTO stpe_layout AS l (version, partitions) VALUES ($1, $2)
ON CONFLICT (only_row) DO UPDATE SET version = l.version
RETURNING version, partitions`,
		layoutVersion, d.Partitions()).Scan(&version, &parts)
	if err != nil {
		return failed("check layout", err)
	}
	return d.layoutOf(version, parts)
}

// layoutOf checks a recorded layout against the driver's.
func (d *Driver) layoutOf(version string, parts int) error {
	if version != layoutVersion {
		return &driver.LayoutError{Reason: driver.LayoutVersion, Found: version, Record: layoutRecord}
	}
	if parts != d.Partitions() {
		return &driver.LayoutError{Reason: driver.LayoutPartitions, Found: strconv.Itoa(parts), Record: layoutRecord}
	}
	return nil
}

// Prepare readies nothing: pgx prepares each statement on a connection's
// first use and keeps it, so the first call of an operation costs one
// round trip more than the next on each connection, which no call made
// ahead could save. It checks that the database answers.
func (d *Driver) Prepare(ctx context.Context) error { return d.ping(ctx) }

// RecordedPartitions is the number of partitions recorded in the
// database's layout, or 0 if no node has checked it yet (nor migrated
// it); a record of another layout version is a *driver.LayoutError.
func (d *Driver) RecordedPartitions(ctx context.Context) (int, error) {
	var exists bool
	if err := d.st.pool.QueryRow(ctx, "SELECT to_regclass('stpe_layout') IS NOT NULL").Scan(&exists); err != nil {
		return 0, failed("recorded partitions", err)
	}
	if !exists {
		return 0, nil
	}
	var version string
	var parts int
	err := d.st.pool.QueryRow(ctx, `SELECT version, partitions FROM stpe_layout`).Scan(&version, &parts)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, failed("recorded partitions", err)
	}
	if version != layoutVersion {
		return 0, &driver.LayoutError{Reason: driver.LayoutVersion, Found: version, Record: layoutRecord}
	}
	return parts, nil
}

// schemaError is a database whose schema is older than the driver's: it
// wraps driver.ErrLayout.
type schemaError struct{ have, want int }

func (e *schemaError) Error() string {
	return fmt.Sprintf("cluster: postgres schema version %d, this driver needs %d: run pgdriver.Migrate (or stpectl migrate) first", e.have, e.want)
}

func (e *schemaError) Unwrap() error { return driver.ErrLayout }
