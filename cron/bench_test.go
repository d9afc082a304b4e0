package cron_test

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cron"
)

// BenchmarkNext measures one Next call, the cost a trigger task adds to a
// fixed-rate run, for typical and rare specs; each step starts from the
// previous run, as a scheduler does.
func BenchmarkNext(b *testing.B) {
	ny := loadZone(b, "America/New_York")
	for _, c := range []struct{ name, spec string }{
		{"every15min", "*/15 * * * *"},
		{"daily0300", "0 3 * * *"},
		{"weekdays0900", "0 9 * * MON-FRI"},
		{"feb29sunday", "0 0 29 2 */7"},
		{"lastDayWeekdayNth", "0 9 L,15W * FRI#3"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := cron.MustParse(c.spec, cron.In(ny))
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
			limit := time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
			next := start
			b.ReportAllocs()
			for b.Loop() {
				if next = s.Next(next); next.Unix() > limit { // Year() would cost a zone lookup
					next = start
				}
			}
		})
	}
	b.Run("parallel", func(b *testing.B) {
		s := cron.MustParse("*/15 * * * *", cron.In(ny))
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			next := start
			for pb.Next() {
				next = s.Next(next)
			}
		})
	})
}

// BenchmarkParse measures Parse, done once per schedule.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cron.Parse("0,30 9-17 * JAN-NOV MON-FRI", cron.In(time.UTC)); err != nil {
			b.Fatal(err)
		}
	}
}
