package cron_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the same zone rules on every machine

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// fuzzZones have transitions worth testing: ordinary DST both ways, shifts
// at midnight (Havana, Santiago, Beirut, Sao Paulo until 2019), 30-minute
// shifts (Lord_Howe), two-hour shifts (Troll), whole skipped days (Apia
// 2011, Kiritimati 1994), odd offsets (Chatham +12:45, St_Johns -3:30,
// Caracas -4:30 in 2007-2016, Kolkata), negative DST (Dublin), DST
// suspended for Ramadan (Casablanca), and no transitions at all (UTC). Their
// offsets are whole minutes from 1970 to 2040 (TestFuzzZonesWholeMinutes),
// which the reference relies on.
var fuzzZones = []string{
	"America/New_York", "Europe/Berlin", "America/Havana", "America/Santiago",
	"Asia/Beirut", "Australia/Lord_Howe", "Antarctica/Troll", "Pacific/Apia",
	"Pacific/Kiritimati", "America/Sao_Paulo", "Pacific/Chatham", "America/St_Johns",
	"America/Caracas", "Asia/Kolkata", "Europe/Dublin", "Africa/Casablanca",
	"Asia/Tehran", "Europe/Moscow", "UTC",
}

var (
	fuzzRangeStart = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	fuzzRangeEnd   = time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

func loadZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

// TestFuzzZonesWholeMinutes checks the reference's assumption about
// fuzzZones by walking every transition from 1970 to 2040.
func TestFuzzZonesWholeMinutes(t *testing.T) {
	for _, name := range fuzzZones {
		loc := loadZone(t, name)
		for u := fuzzRangeStart; u < fuzzRangeEnd; {
			at := time.Unix(u, 0).In(loc)
			if _, off := at.Zone(); off%60 != 0 {
				t.Fatalf("%s: offset %ds at %v is not whole minutes", name, off, at)
			}
			_, end := at.ZoneBounds()
			if end.IsZero() || end.Unix() <= u {
				break
			}
			u = end.Unix()
		}
	}
}

// fuzzStart picks the start time of a fuzz case: with nearTransition, within
// three hours of a transition of loc after a point of 1970-2040 chosen by
// start; otherwise that point. nanos adds a fraction of a second.
func fuzzStart(loc *time.Location, start int64, nearTransition bool, nanos uint32) time.Time {
	span := fuzzRangeEnd - fuzzRangeStart
	u := fuzzRangeStart + ((start%span)+span)%span
	if nearTransition {
		if _, end := time.Unix(u, 0).In(loc).ZoneBounds(); !end.IsZero() {
			u = end.Unix() - 3*3600 + ((start/span)%(6*3600)+6*3600)%(6*3600)
		}
	}
	return time.Unix(u, int64(nanos%1e9))
}

// FuzzNext compares Next with the brute-force reference of
// reference_test.go over generated specs, the zones of fuzzZones and start
// times from 1970 to 2040, for three consecutive runs. For five-field specs
// the reference first skips, day by day, to the first matching date (up to
// 60 years ahead) and scans three days of instants from just before it; for
// six-field specs it scans three hours from the start. Where the reference
// finds a run, Next's must be the same instant in the spec's zone; where it
// finds none, Next's run must lie beyond what it scanned.
func FuzzNext(f *testing.F) {
	f.Add([]byte{0, 8, 8, 8, 8, 8}, uint8(0), int64(1772953200-fuzzRangeStart), true, false, uint32(0))
	f.Add([]byte{15, 2, 30, 2, 1, 0, 0}, uint8(0), int64(1772920000), true, false, uint32(5e8))
	f.Add([]byte{15, 2, 30, 2, 1, 0, 0, 0}, uint8(1), int64(1792000000), true, false, uint32(0))
	f.Add([]byte{3, 0, 15, 0, 0, 0, 0, 0}, uint8(6), int64(1700000000), true, false, uint32(0))
	f.Add([]byte{0, 4, 10, 50, 0}, uint8(5), int64(1234567890), true, true, uint32(999999999))
	f.Fuzz(checkNextAgainstReference)
}

// checkNextAgainstReference is FuzzNext's check of one generated case.
func checkNextAgainstReference(t *testing.T, specBytes []byte, zone uint8, start int64, nearTransition, withSeconds bool, nanos uint32) {
	g := genSpec(specBytes, withSeconds)
	loc := loadZone(t, fuzzZones[int(zone)%len(fuzzZones)])
	s, err := cron.Parse(g.text, append(g.options(), cron.In(loc))...)
	if err != nil {
		if !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Fatalf("Parse(%q): %v does not wrap ErrInvalidArgument", g.text, err)
		}
		if g.runsSomeDay() {
			t.Fatalf("Parse(%q) = %v, but the spec runs", g.text, err)
		}
		return
	}
	if !g.runsSomeDay() {
		t.Fatalf("Parse(%q) accepted a spec that never runs", g.text)
	}
	horizon := 72 * time.Hour
	if withSeconds {
		horizon = 3 * time.Hour
	}
	from := fuzzStart(loc, start, nearTransition, nanos).In(loadZone(t, fuzzZones[int(zone/2)%len(fuzzZones)]))
	for range 3 {
		got := s.Next(from)
		var want time.Time
		var ok bool
		limit := from.Add(horizon)
		if withSeconds {
			want, ok = g.refNext(loc, from, horizon)
		} else {
			want, ok, limit = g.refNextFar(loc, from, horizon)
		}
		if !ok {
			if !got.IsZero() && !got.After(limit) {
				t.Fatalf("%q in %v: Next(%v) = %v; the reference finds no run up to %v", g.text, loc, from, got, limit)
			}
			return
		}
		if !got.Equal(want) || got.Location() != loc {
			t.Fatalf("%q in %v (wildcard %v): Next(%v) = %v, want %v", g.text, loc, g.wildcard, from, got, want.In(loc))
		}
		from = got
	}
}

// TestNextAgainstReferenceNewForms runs FuzzNext's check on a fixed sample
// of generated specs with Quartz's day forms, H, '?' and year fields, so
// that every test run covers them, and checks that the sample does.
func TestNextAgainstReferenceNewForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	for range 150 {
		specBytes := make([]byte, 48)
		for i := range specBytes {
			specBytes[i] = byte(rng.Uint32())
		}
		withSeconds := rng.IntN(4) == 0
		g := genSpec(specBytes, withSeconds)
		for _, form := range []string{"L", "W", "#", "H", "?"} {
			if strings.Contains(g.text, form) {
				seen[form]++
			}
		}
		if g.yearsSet {
			seen["year"]++
		}
		checkNextAgainstReference(t, specBytes, uint8(rng.Uint32()), rng.Int64(), rng.IntN(2) == 0, withSeconds, 0)
	}
	for _, form := range []string{"L", "W", "#", "H", "?", "year"} {
		require.Greater(t, seen[form], 5, "specs with %s in the sample", form)
	}
}

// FuzzParse feeds arbitrary text to Parse in each dialect, with and
// without seconds, a year field and a hash key: it never panics, every
// error wraps ErrInvalidArgument and starts with "cron: ", and an accepted
// spec's String is the text and its Next runs strictly later.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"* * * * *", "*/15 9-17 * * MON-FRI", "0 0 13 * FRI", "CRON_TZ=Europe/Berlin 0 3 * * *",
		"TZ=America/New_York 30 2 * * *", "@daily", "@every 1h", "0 0 30 2 *", "61 * * * *",
		"1-2/0 * * * *", "5/10 * * * *", "0 0 31 4,6,9,11 *", "0 0 29 2 *", "CRON_TZ=Nowhere/City * * * * *",
		"0 0 ? * *", "* * * * * *", "0 0 1,,2 * *", "1--2 * * * *",
		"0 9 * * Mon-Sun", "0 0 * * 1-0/2", "0 0 L * *", "0 0 L-3 * *", "0 0 LW * *", "0 0 15W * ?",
		"0 0 * * 5L", "0 0 * * FRI#3", "0 0 12 ? * 2#1 2027", "0 15 10 L-5W * ? 2010", "H H * * *",
		"H(0-29)/10 * * * *", "@every 1h30m", "@every 500ms", "0 0 1 1 * 2026-2030/2", "0 0 H(1-5) * H",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	from := time.Date(2026, 3, 8, 1, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string, withSeconds bool) {
		for _, opts := range [][]cron.Option{
			{}, {cron.WithYear(), cron.WithHashKey(spec)}, {cron.Quartz()}, {cron.Spring(), cron.WithHashKey("k")},
		} {
			opts = append(opts, cron.In(time.UTC))
			if withSeconds {
				opts = append(opts, cron.WithSeconds())
			}
			s, err := cron.Parse(spec, opts...)
			if err != nil {
				if !errors.Is(err, scheduler.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "cron: ") {
					t.Fatalf("Parse(%q) error %q: want a \"cron: \" error wrapping ErrInvalidArgument", spec, err)
				}
				if !namesWhere(err.Error()) {
					t.Fatalf("Parse(%q) error %q names neither a field and its column, nor the spec, nor the zone and its column", spec, err)
				}
				continue
			}
			if s.String() != spec {
				t.Fatalf("String() = %q, want %q", s.String(), spec)
			}
			if next := s.Next(from); !next.IsZero() && !next.After(from) {
				t.Fatalf("%q: Next(%v) = %v is not after it", spec, from, next)
			}
		}
	})
}

// TestNextYearOfMinutes compares every run of generated specs with
// Quartz's day forms, H, '?' or a year field over all of 2026, minute by
// minute, in zones with DST changes of several kinds: Next chained from
// the start must give exactly the reference's runs. Specs with fewer than
// a dozen runs in 2026, or more than 5000 (a run every few minutes, which
// would make the test slow), are passed over.
func TestNextYearOfMinutes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zones := []string{"America/New_York", "Australia/Lord_Howe", "America/Santiago", "Europe/Berlin"}
	for checked := 0; checked < len(zones); {
		specBytes := make([]byte, 48)
		for i := range specBytes {
			specBytes[i] = byte(rng.Uint32())
		}
		g := genSpec(specBytes, false)
		if !strings.ContainsAny(g.text, "LW#H?") && !g.yearsSet {
			continue
		}
		loc := loadZone(t, zones[checked%len(zones)])
		s, err := cron.Parse(g.text, append(g.options(), cron.In(loc))...)
		if err != nil {
			continue
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
		end := time.Date(2027, 1, 1, 0, 0, 0, 0, loc)
		if n := countRuns(s, start, end, 5001); n < 12 || n > 5000 {
			continue // chosen by Next's count; checked against the reference below
		}
		runs := 0
		for from := start; ; runs++ {
			want, ok := g.refNext(loc, from, end.Sub(from))
			got := s.Next(from)
			if !ok {
				require.True(t, got.IsZero() || !got.Before(end), "%q in %v: Next(%v) = %v; the reference finds none before %v", g.text, loc, from, got, end)
				break
			}
			require.True(t, got.Equal(want), "%q in %v: Next(%v) = %v, want %v", g.text, loc, from, got, want.In(loc))
			from = got
		}
		checked++
		t.Logf("%q in %v: %d runs in 2026, all as the reference's", g.text, loc, runs)
	}
}

// countRuns counts s's runs from start to end, up to limit.
func countRuns(s *cron.Schedule, start, end time.Time, limit int) int {
	n := 0
	for next := s.Next(start); n < limit && !next.IsZero() && next.Before(end); next = s.Next(next) {
		n++
	}
	return n
}

// namesWhere reports whether a Parse error says where the spec is wrong:
// a field and the column of the bad element, the zone and its column, or
// the spec as a whole (its field count or descriptor).
func namesWhere(msg string) bool {
	switch {
	case strings.HasPrefix(msg, "cron: spec "), strings.HasPrefix(msg, `cron: WithHashKey(""): `):
		return true
	case strings.HasPrefix(msg, "cron: time zone "), strings.Contains(msg, " field "):
		return strings.Contains(msg, " at column ")
	}
	return false
}
