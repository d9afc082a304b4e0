package pgdriver_test

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExpiredWithAFullPurge measures the delay a purge adds to the
// reaper's Expired call at its largest: a run that deletes its bound,
// 10 batches of 1000 rows of done markers and of timeline minutes (the
// done records' statement finds none), from tables of 10,000 expired rows
// each. Compare with BenchmarkExpiredWithoutAPurge.
func BenchmarkExpiredWithAFullPurge(b *testing.B) {
	ctx := context.Background()
	d, _, pool := purgeDriver(b, time.Nanosecond)
	for b.Loop() {
		b.StopTimer()
		for _, sql := range []string{`INSERT INTO stpe_done_marks (id, kind, due, payload_md5, expires_at)
SELECT 'm' || g, 'k', statement_timestamp(), md5(''), statement_timestamp() - interval '1 second'
FROM generate_series(1, 10000) g`, `INSERT INTO stpe_timeline (partition, minute, kind, field, count, expires_at)
SELECT g % 8, g, 'k', '0', 1, statement_timestamp() - interval '1 second' FROM generate_series(1, 10000) g`} {
			if _, err := pool.Exec(ctx, sql); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, _, err := d.Expired(ctx, nil, 1000); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if p := d.Purges(); p.Failures != 0 || p.Rows != 20000*int64(b.N) {
		b.Fatalf("Purges = %+v, want %d rows", p, 20000*b.N)
	}
}

// BenchmarkExpiredWithoutAPurge is the reaper's Expired call between two
// purges: the listing alone.
func BenchmarkExpiredWithoutAPurge(b *testing.B) {
	ctx := context.Background()
	d, _, _ := purgeDriver(b, time.Hour)
	if _, _, err := d.Expired(ctx, nil, 1000); err != nil { // the purge of the hour, on empty tables
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := d.Expired(ctx, nil, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
