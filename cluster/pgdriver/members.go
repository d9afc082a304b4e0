package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Members: each started node renews its row in stpe_members every so
// often, with a time to live; a row not renewed in time is expired, and
// the live rows are the cluster's members (the cluster package's
// prefix:member records and claimers' set, River's leader and producer
// tables).

// Member is a started node's record.
type Member struct {
	ID      string
	Host    string
	PID     int
	Version string
	// Kinds are the kinds it handles.
	Kinds []string
	// Claims is true for a node that claims tasks (a node that only
	// schedules is a member too).
	Claims   bool
	Stopping bool
	// StartedAt, HeartbeatAt and ExpiresAt are the database's times of
	// its first renewal, its last one, and when it expires.
	StartedAt, HeartbeatAt, ExpiresAt time.Time
}

// RenewMember writes m's record, live for ttl from the database's now
// (its start is kept from its first renewal), deletes the records that
// expired, and returns the live members, m included, by ID. A ttl of
// zero or less, or an empty ID, is an error wrapping
// scheduler.ErrInvalidArgument.
func (s *Store) RenewMember(ctx context.Context, m Member, ttl time.Duration) ([]Member, error) {
	if m.ID == "" {
		return nil, invalid("renew member", "empty node ID")
	}
	if ttl <= 0 {
		return nil, invalid("renew member "+m.ID, "time to live %v <= 0", ttl)
	}
	kinds := m.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	var members []Member
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
INSERT INTO stpe_members (id, host, pid, version, kinds, claims, stopping, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, statement_timestamp() + $8::bigint * interval '1 microsecond')
ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, version = EXCLUDED.version,
    kinds = EXCLUDED.kinds, claims = EXCLUDED.claims, stopping = EXCLUDED.stopping,
    heartbeat_at = statement_timestamp(), expires_at = EXCLUDED.expires_at`,
			m.ID, m.Host, m.PID, m.Version, kinds, m.Claims, m.Stopping, micros(ttl)); err != nil {
			return err
		}
		// Rows another renewal holds are skipped, so that two renewals
		// never wait on each other (nor deadlock).
		if _, err := tx.Exec(ctx, `
DELETE FROM stpe_members WHERE id IN (
    SELECT id FROM stpe_members WHERE expires_at <= statement_timestamp() FOR UPDATE SKIP LOCKED
)`); err != nil {
			return err
		}
		var err error
		members, err = s.members(ctx, tx)
		return err
	})
	if err != nil {
		return nil, failed("renew member "+m.ID, err)
	}
	return members, nil
}

// LeaveMember removes node id's record at once, as a node that stops
// does; removing one that is gone does nothing.
func (s *Store) LeaveMember(ctx context.Context, id string) error {
	if id == "" {
		return invalid("leave", "empty node ID")
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM stpe_members WHERE id = $1`, id); err != nil {
		return failed("leave "+id, err)
	}
	return nil
}

// Members returns the live members by ID: those whose record has not
// expired by the database's clock.
func (s *Store) Members(ctx context.Context) ([]Member, error) {
	m, err := s.members(ctx, s.pool)
	if err != nil {
		return nil, failed("members", err)
	}
	return m, nil
}

// members reads the live members on q.
func (s *Store) members(ctx context.Context, q querier) ([]Member, error) {
	rows, err := q.Query(ctx, `
SELECT id, host, pid, version, kinds, claims, stopping, started_at, heartbeat_at, expires_at
FROM stpe_members WHERE expires_at > statement_timestamp() ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) {
		var m Member
		err := r.Scan(&m.ID, &m.Host, &m.PID, &m.Version, &m.Kinds, &m.Claims, &m.Stopping, &m.StartedAt, &m.HeartbeatAt, &m.ExpiresAt)
		return m, err
	})
}
