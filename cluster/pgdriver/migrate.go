package pgdriver

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrations: the schema is a list of versioned SQL files embedded in the
// package (migrations/NNN_name.sql), applied in order by Migrate and
// recorded in the table stpe_migrations. River's counterpart is its
// rivermigrate package; Quartz ships its JDBC tables as a script to run
// by hand.

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the advisory lock Migrate takes, so that
// nodes starting at once apply each migration once: the first letters of
// "stpe migrate" in hexadecimal.
const migrationLock int64 = 0x7374_7065_6d69_6772

// migration is one file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationName is the shape of a migration's file name.
var migrationName = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.sql$`)

// migrations reads the embedded migrations, in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("cluster: migrate: file %q is not named NNN_name.sql", e.Name())
		}
		sql, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		v, _ := strconv.Atoi(m[1])
		ms = append(ms, migration{version: v, name: m[2], sql: string(sql)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("cluster: migrate: migration %d missing before %s", i+1, m.name)
		}
	}
	return ms, nil
}

// Migrate brings the database's schema up to this package's version: it
// applies, in one transaction, every embedded migration the table
// stpe_migrations does not record yet, and records them. It is safe to
// call from every node at start: it holds a transaction-scoped advisory
// lock while it works, so nodes starting at once wait for one another
// and each migration is applied once; a later call finds nothing to do.
// A database migrated by a newer version of this package is left as it
// is. It returns the schema version the database has afterwards.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	version := 0
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS stpe_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT statement_timestamp()
)`); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM stpe_migrations").Scan(&version); err != nil {
			return err
		}
		for _, m := range ms {
			if m.version <= version {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %03d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO stpe_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return err
			}
			version = m.version
		}
		return nil
	})
	if err != nil {
		return 0, failed("migrate", err)
	}
	return version, nil
}

// SchemaVersion is the highest migration the database records, 0 for a
// database never migrated.
func SchemaVersion(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('stpe_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return 0, failed("schema version", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM stpe_migrations").Scan(&v); err != nil {
		return 0, failed("schema version", err)
	}
	return v, nil
}

// LatestVersion is the schema version Migrate brings a database to.
func LatestVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}
