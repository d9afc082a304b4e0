package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// dstCase is a spec whose runs around a daylight-saving change this
// package's rules fix (the package doc of cron states them).
type dstCase struct {
	name string
	spec string
	zone string
	from string // wall time in zone, time.DateTime
	want []string
}

// runLayout shows a run with its offset, which tells the two occurrences
// of a repeated wall time apart.
const runLayout = "2006-01-02 15:04 -07"

var dstCases = []dstCase{
	{"NY spring gap, fixed 02:30", "30 2 * * *", "America/New_York", "2026-03-07 12:00:00",
		[]string{"2026-03-08 03:00 -04", "2026-03-09 02:30 -04"}},
	{"NY spring gap, */15", "*/15 * * * *", "America/New_York", "2026-03-08 01:30:00",
		[]string{"2026-03-08 01:45 -05", "2026-03-08 03:00 -04", "2026-03-08 03:15 -04"}},
	{"NY fall repeat, fixed 01:30", "30 1 * * *", "America/New_York", "2026-10-31 12:00:00",
		[]string{"2026-11-01 01:30 -04", "2026-11-02 01:30 -05"}},
	{"NY fall repeat, wildcard hour", "30 * * * *", "America/New_York", "2026-11-01 00:00:00",
		[]string{"2026-11-01 00:30 -04", "2026-11-01 01:30 -04", "2026-11-01 01:30 -05", "2026-11-01 02:30 -05"}},
	{"Berlin fall repeat, fixed 02:00", "0 2 * * *", "Europe/Berlin", "2026-10-24 12:00:00",
		[]string{"2026-10-25 02:00 +02", "2026-10-26 02:00 +01"}},
	// This package's own rule for a skipped day; cronie runs nothing.
	{"Apia skipped day, fixed 09:00 on Dec 30", "0 9 30 12 *", "Pacific/Apia", "2011-12-29 12:00:00",
		[]string{"2011-12-31 00:00 +14", "2012-12-30 09:00 +14"}},
}

// result is what one peer computed for one case.
type result struct {
	got []string // the runs, in runLayout
	err error
}

// ok reports whether the peer computed the case's runs.
func (r result) ok(c dstCase) bool { return r.err == nil && slices.Equal(r.got, c.want) }

// measure runs every case on every peer: results[i][j] is peer i on case j.
func measure() ([][]result, error) {
	results := make([][]result, len(peers))
	for i, p := range peers {
		for _, c := range dstCases {
			loc, err := time.LoadLocation(c.zone)
			if err != nil {
				return nil, err
			}
			from, err := time.ParseInLocation(time.DateTime, c.from, loc)
			if err != nil {
				return nil, err
			}
			runs, err := runsWithin(p, c.spec, loc, from, len(c.want), 5*time.Second)
			r := result{err: err}
			for _, run := range runs {
				r.got = append(r.got, run.In(loc).Format(runLayout))
			}
			results[i] = append(results[i], r)
		}
	}
	return results, nil
}

// runsWithin is p.runs, or an error if p has not returned within limit: a
// library whose Next loops forever is left spinning on its goroutine until
// the program exits.
func runsWithin(p peer, spec string, loc *time.Location, from time.Time, n int, limit time.Duration) ([]time.Time, error) {
	type answer struct {
		runs []time.Time
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		runs, err := p.runs(spec, loc, from, n)
		done <- answer{runs, err}
	}()
	select {
	case a := <-done:
		return a.runs, a.err
	case <-time.After(limit):
		return nil, fmt.Errorf("no answer within %v (Next does not return)", limit)
	}
}

// writeTable writes the cases and, for each peer, what it computed, as
// Markdown: one table of the expected runs, one row per peer with a mark
// per case, and the wrong runs listed after.
func writeTable(w io.Writer, results [][]result) {
	fmt.Fprintln(w, "| case | spec | zone | runs after "+"the start, per the rules |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for j, c := range dstCases {
		fmt.Fprintf(w, "| %d. %s | `%s` | %s from %s | %s |\n", j+1, c.name, c.spec, c.zone, c.from, strings.Join(c.want, ", "))
	}
	fmt.Fprintln(w)
	header, rule := "| library |", "|---|"
	for j := range dstCases {
		header += fmt.Sprintf(" %d |", j+1)
		rule += "---|"
	}
	fmt.Fprintln(w, header+" right |")
	fmt.Fprintln(w, rule+"---|")
	for i, p := range peers {
		row, right := "| "+p.name+" |", 0
		for j, c := range dstCases {
			if results[i][j].ok(c) {
				row += " ✓ |"
				right++
			} else {
				row += " ✗ |"
			}
		}
		fmt.Fprintf(w, "%s %d of %d |\n", row, right, len(dstCases))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What each library computed where it differs:")
	fmt.Fprintln(w)
	for i, p := range peers {
		for j, c := range dstCases {
			r := results[i][j]
			switch {
			case r.ok(c):
			case r.err != nil:
				fmt.Fprintf(w, "- %s, case %d: error: %v\n", p.name, j+1, r.err)
			default:
				fmt.Fprintf(w, "- %s, case %d: %s\n", p.name, j+1, strings.Join(r.got, ", "))
			}
		}
	}
}
