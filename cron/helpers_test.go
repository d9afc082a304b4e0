package cron_test

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// runLayout shows a run time with its offset, which tells the two
// occurrences of a repeated wall time apart.
const runLayout = "2006-01-02 15:04:05 -07:00"

// wallIn returns the wall time y-m-d h:mi:s in the zone named zone. The
// tests use it only for wall times that occur once: for a repeated one the
// time package does not say which occurrence it picks.
func wallIn(t *testing.T, zone string, y int, m time.Month, d, h, mi, s int) time.Time {
	t.Helper()
	return time.Date(y, m, d, h, mi, s, 0, loadZone(t, zone))
}

// runs returns the first n runs of spec in zone after from, each checked to
// be in the spec's zone and later than the one before, formatted with
// runLayout.
func runs(t *testing.T, spec, zone string, from time.Time, n int, opts ...cron.Option) []string {
	t.Helper()
	loc := loadZone(t, zone)
	s, err := cron.Parse(spec, append([]cron.Option{cron.In(loc)}, opts...)...)
	require.NoError(t, err)
	var out []string
	for range n {
		next := s.Next(from)
		require.False(t, next.IsZero(), "%q: no run after %v", spec, from)
		require.True(t, next.After(from), "%q: Next(%v) = %v is not after it", spec, from, next)
		require.Same(t, loc, next.Location(), "%q: run not in the spec's zone", spec)
		out = append(out, next.Format(runLayout))
		from = next
	}
	return out
}
