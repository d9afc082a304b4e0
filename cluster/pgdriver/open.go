package pgdriver

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Open migrates the database of pool (Migrate) and returns the driver of
// a Store on it with opts (New, NewDriver): the one call a program makes
// before cluster.NewWithDriver. It is safe for every node to call at
// start, as Migrate is. River's counterpart is riverpgxv5.New followed by
// rivermigrate's Migrate. A nil pool or bad opts is an error wrapping
// scheduler.ErrInvalidArgument, and nothing is migrated; a database error
// is returned wrapped.
func Open(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Driver, error) {
	st, err := New(pool, opts)
	if err != nil {
		return nil, err
	}
	if _, err := Migrate(ctx, pool); err != nil {
		return nil, err
	}
	return NewDriver(st)
}
