package main

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/adhocore/gronx"
	"github.com/go-stpe/scheduler/cron"
	nrcron "github.com/netresearch/go-cron"
	robfig "github.com/robfig/cron/v3"
)

// benchLib is a library's Next for the side-by-side benchmark.
type benchLib struct {
	name  string
	parse func(spec string, loc *time.Location) (func(time.Time) time.Time, error)
}

var benchLibs = []benchLib{
	{"ours", func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		s, err := cron.Parse(spec, cron.In(loc))
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	}},
	{"robfig", func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		s, err := robfig.ParseStandard("CRON_TZ=" + loc.String() + " " + spec)
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	}},
	// netresearch/go-cron is robfig/cron's maintained fork; its Extended
	// parser option adds L, W and #, and DowOrDom Vixie's day rule, which
	// the other libraries use.
	{"netresearch", func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		p := nrcron.NewParser(nrcron.Minute | nrcron.Hour | nrcron.Dom | nrcron.Month | nrcron.Dow | nrcron.Extended | nrcron.DowOrDom)
		s, err := p.Parse("CRON_TZ=" + loc.String() + " " + spec)
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	}},
	{"gronx", func(spec string, loc *time.Location) (func(time.Time) time.Time, error) {
		if _, err := gronx.NextTickAfter(spec, time.Date(2026, 1, 1, 0, 0, 0, 0, loc), false); err != nil {
			return nil, err
		}
		return func(t time.Time) time.Time {
			next, _ := gronx.NextTickAfter(spec, t.In(loc), false)
			return next
		}, nil
	}},
}

// benchSpecs are the specs measured: a wildcard job, and one with L, W
// and # (the last day, the weekday nearest the 15th, the third Friday).
var benchSpecs = []struct{ name, spec string }{
	{"every15min", "*/15 * * * *"},
	{"L_W_hash", "0 9 L,15W * FRI#3"},
}

// BenchmarkNext measures one Next call of each library on each spec in New
// York, from the previous run as a scheduler asks, in one run so that the
// ratios hold on any machine. A library that cannot parse a spec, or whose
// first 200 runs differ from ours, is skipped with the reason.
func BenchmarkNext(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
	limit := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, spec := range benchSpecs {
		ours, err := benchLibs[0].parse(spec.spec, ny)
		if err != nil {
			b.Fatal(err)
		}
		for _, lib := range benchLibs {
			b.Run(spec.name+"/"+lib.name, func(b *testing.B) {
				next, err := lib.parse(spec.spec, ny)
				if err == nil {
					err = sameRuns(ours, next, start, 200)
				}
				if err != nil {
					b.Skipf("%s on %q: %v", lib.name, spec.spec, err)
				}
				at := start
				b.ReportAllocs()
				for b.Loop() {
					if at = next(at); at.Unix() > limit {
						at = start
					}
				}
			})
		}
	}
}

// sameRuns checks that next gives the same first n runs as want from start.
func sameRuns(want, next func(time.Time) time.Time, start time.Time, n int) error {
	a, b := start, start
	for range n {
		a, b = want(a), next(b)
		if !a.Equal(b) {
			return errors.New("its runs differ from ours at " + a.String() + " (it gives " + b.String() + ")")
		}
	}
	return nil
}

// TestOursFollowsTheRules: the cron package computes every case of the
// comparison as its rules say (the other libraries are only measured, by
// running the program).
func TestOursFollowsTheRules(t *testing.T) {
	for _, c := range dstCases {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		from, err := time.ParseInLocation(time.DateTime, c.from, loc)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := peers[0].runs(c.spec, loc, from, len(c.want))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range runs {
			got = append(got, r.Format(runLayout))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBenchSpecsAgree: the libraries benchmarked on each spec compute the
// same runs as ours, so the benchmark compares like with like; the ones
// that cannot parse a spec are the ones the docs say.
func TestBenchSpecsAgree(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
	cannotParse := map[string]bool{"L_W_hash/robfig": true}
	for _, spec := range benchSpecs {
		ours, err := benchLibs[0].parse(spec.spec, ny)
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range benchLibs[1:] {
			next, err := lib.parse(spec.spec, ny)
			if cannotParse[spec.name+"/"+lib.name] {
				if err == nil {
					t.Errorf("%s now parses %q: benchmark it", lib.name, spec.spec)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s on %q: %v", lib.name, spec.spec, err)
				continue
			}
			if err := sameRuns(ours, next, start, 200); err != nil {
				t.Errorf("%s on %q: %v", lib.name, spec.spec, err)
			}
		}
	}
}
