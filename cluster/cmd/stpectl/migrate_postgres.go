package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// stpectl migrate on PostgreSQL: apply the schema migrations the database
// lacks (pgdriver.Migrate: in one transaction, under an advisory lock, so
// that it is safe beside nodes starting), and say from which version to
// which. A database a newer version migrated is left as it is.

// migratePostgresJSON is migrate's document on PostgreSQL.
type migratePostgresJSON struct {
	// Store is "postgres".
	Store string `json:"store"`
	// FromVersion is the schema version the database had, 0 for none.
	FromVersion int `json:"from_version"`
	// SchemaVersion is the version it has now.
	SchemaVersion int     `json:"schema_version"`
	Seconds       float64 `json:"seconds"`
}

// migratePostgres applies the migrations of pgdriver to the database of p.
func migratePostgres(ctx context.Context, s *session, p *pgStore) error {
	start := time.Now()
	from, err := pgdriver.SchemaVersion(ctx, p.pool)
	if err != nil {
		return err
	}
	to, err := pgdriver.Migrate(ctx, p.pool)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if s.json {
		writeJSON(s.stdout, migratePostgresJSON{Store: "postgres", FromVersion: from, SchemaVersion: to, Seconds: elapsed.Seconds()})
		return nil
	}
	if to == from {
		fmt.Fprintf(s.stdout, "postgres %s: schema at version %d already; nothing to apply\n", s.addr, to)
		return nil
	}
	fmt.Fprintf(s.stdout, "postgres %s: schema migrated from version %d to %d in %v\n", s.addr, from, to, elapsed.Round(time.Millisecond))
	return nil
}
