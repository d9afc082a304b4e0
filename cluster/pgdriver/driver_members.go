package pgdriver

import (
	"context"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// Renew renews, in one call of the function stpe_renew (one round trip,
// one transaction), the membership of r.Node for r.TTL from the
// database's now (as a claimer of r.Kinds, or not), its member record and
// its periodic declarations (each kept at least as long as the
// membership), deletes the records that expired, and returns the live
// claimers, the database's time and whether the claimers changed (this
// node joined or left them, or an expired claimer was found). A zero
// r.TTL removes the node's record; Changed then says whether it was a
// claimer. Expired rows another renewal holds are skipped, so renewals
// never wait on each other. asynq's heartbeater, River's producers table.
func (d *Driver) Renew(ctx context.Context, r driver.Renewal) (driver.Membership, error) {
	rec := r.Record
	names := make([]string, len(r.Periodic))
	triggers := make([]string, len(r.Periodic))
	nexts := make([]*time.Time, len(r.Periodic))
	for i, p := range r.Periodic {
		names[i], triggers[i], nexts[i] = p.Name, p.Trigger, optTime(p.Next)
	}
	var nowUS int64
	var m driver.Membership
	var live, kinds []string
	err := d.st.pool.QueryRow(ctx, `SELECT * FROM stpe_renew($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		r.Node, r.TTL.Microseconds(), r.Claimer, nonNil(r.Kinds),
		rec.Host, rec.PID, rec.Version, optTime(rec.Started), rec.Concurrency,
		rec.Running, rec.Windowed, rec.Waiting, rec.Owned, rec.BackedUp,
		nonNil(rec.Kinds), rec.Stopping, names, triggers, nexts).Scan(&nowUS, &m.Changed, &live, &kinds)
	if err != nil {
		return driver.Membership{}, failed("renew "+r.Node, err)
	}
	m.Now = time.UnixMicro(nowUS)
	for i, name := range live {
		m.Live = append(m.Live, driver.LiveNode{Name: name, Kinds: strings.Fields(kinds[i])})
	}
	return m, nil
}

// Members are the live member records (those whose expiry is ahead of the
// database's clock), by name.
func (d *Driver) Members(ctx context.Context) ([]driver.Member, error) {
	rows, err := d.st.pool.Query(ctx, `
SELECT id, host, pid, version, node_started, heartbeat_at, expires_at, concurrency,
    running, windowed, waiting, owned, backed_up, kinds, stopping
FROM stpe_members WHERE expires_at > statement_timestamp() ORDER BY id`)
	if err != nil {
		return nil, failed("members", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.Member, error) {
		var m driver.Member
		var started *time.Time
		err := r.Scan(&m.Name, &m.Host, &m.PID, &m.Version, &started, &m.Heartbeat, &m.Expires, &m.Concurrency,
			&m.Running, &m.Windowed, &m.Waiting, &m.Owned, &m.BackedUp, &m.Kinds, &m.Stopping)
		m.Started, m.Heartbeat, m.Expires = stamp(deref(started)), stamp(m.Heartbeat), stamp(m.Expires)
		if len(m.Kinds) == 0 {
			m.Kinds = nil
		}
		return m, err
	})
	if err != nil {
		return nil, failed("members", err)
	}
	return out, nil
}

// PeriodicDeclarations are the live periodic declarations (those whose
// expiry is ahead of the database's clock), by name, each with its last
// recorded run.
func (d *Driver) PeriodicDeclarations(ctx context.Context) ([]driver.PeriodicDeclaration, error) {
	rows, err := d.st.pool.Query(ctx, `
SELECT name, trigger_text, next_at, last_node, last_due, last_started, last_ended, last_outcome, last_error
FROM stpe_periodic_decls WHERE expires_at > statement_timestamp() ORDER BY name`)
	if err != nil {
		return nil, failed("periodic declarations", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.PeriodicDeclaration, error) {
		var p driver.PeriodicDeclaration
		var next, due, started, ended *time.Time
		var run driver.PeriodicRun
		err := r.Scan(&p.Name, &p.Trigger, &next, &run.Node, &due, &started, &ended, &run.Outcome, &run.Error)
		p.Next = stamp(deref(next))
		if run.Node != "" {
			run.Due, run.Started, run.Ended = stamp(deref(due)), stamp(deref(started)), stamp(deref(ended))
			p.LastRun = &run
		}
		return p, err
	})
	if err != nil {
		return nil, failed("periodic declarations", err)
	}
	return out, nil
}

// RecordPeriodicRun records run as the last run of periodic task name in
// its declaration; a declaration that expired meanwhile (or none) is not
// written, and that is no error.
func (d *Driver) RecordPeriodicRun(ctx context.Context, name string, run driver.PeriodicRun) error {
	_, err := d.st.pool.Exec(ctx, `
UPDATE stpe_periodic_decls SET last_node = $2, last_due = $3, last_started = $4, last_ended = $5,
    last_outcome = $6, last_error = $7
WHERE name = $1 AND expires_at > statement_timestamp()`,
		name, run.Node, optTime(run.Due), optTime(run.Started), optTime(run.Ended), string(run.Outcome), run.Error)
	if err != nil {
		return failed("record the run of periodic task "+name, err)
	}
	return nil
}

// optTime is t for a nullable column: nil for the zero Time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// stamp is t as the drivers give times: µs since the epoch in the local
// zone (time.UnixMicro), the zero Time kept.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMicro(t.UnixMicro())
}

// nonNil is s, or an empty slice for nil (a NOT NULL array column).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
