package cron

import (
	"math/bits"
	"time"

	"github.com/go-stpe/scheduler"
)

// Schedule is a parsed cron spec: a [scheduler.Trigger] whose Next returns
// the spec's next run time in its zone, with the daylight-saving rules of
// cronie and Debian's cron (see the package doc). It is the counterpart of
// Spring's CronTrigger / CronExpression, Quartz's CronTrigger and
// robfig/cron's SpecSchedule.
//
// A Schedule comes from [Parse] or [MustParse] and never changes (apart
// from an internal cache that goroutines share safely): Next and String are safe for
// concurrent use by any number of goroutines. The zero Schedule never runs
// (its Next returns the zero Time).
type Schedule struct {
	spec string         // the spec as given to Parse, returned by String
	loc  *time.Location // the zone the spec is read in

	// One bit per allowed value.
	second uint64 // bits 0-59
	minute uint64 // bits 0-59
	hour   uint64 // bits 0-23
	dom    uint32 // bits 1-31
	month  uint16 // bits 1-12
	dow    uint8  // bits 0-6, Sunday = 0

	// Quartz's day forms, resolved per month by dayMaskOf (special is
	// true when any is set). Bit n of domLast is the day n days before
	// the last (L-n; L is n = 0), of domLastWeekday the weekday nearest it
	// (L-nW); bit d of domWeekday is the weekday nearest day d (dW). Bit w
	// of dowLast is the month's last weekday w (wL); bit k of dowNth[w] is
	// its k-th weekday w (w#k). Weekdays are numbered Sunday = 0.
	domLast, domLastWeekday, domWeekday uint32
	dowLast                             uint8
	dowNth                              [7]uint8
	special                             bool

	// years holds bit y-1970 for each year of a year field; without one,
	// or with '*', yearsRestricted is false and every year runs.
	years           bitset
	yearsRestricted bool

	// every is the duration of "@every <duration>"; such a Schedule has no
	// fields, and its Next is t plus every.
	every time.Duration

	// daysMatchBoth is Vixie's rule: true when the day-of-month or the
	// day-of-week field begins with '*', so a day must match both fields;
	// false when both are restricted, so a day matching either runs.
	daysMatchBoth bool

	// wildcard is true when the minute or the hour field begins with '*'
	// (cronie's rule): such a job runs at every real matching instant;
	// otherwise it is a fixed-time job (see the package doc on DST).
	wildcard bool

	// dowDays[w] holds, for a month whose 1st is weekday w, a bit d for
	// every day d (1-31) whose weekday is in dow; computed by Parse.
	dowDays [7]uint32

	// lastSpan caches the zone span Next looked up last for its start,
	// which is looked up again by most later calls: finding a span costs
	// two lookups in loc, and past a zone's listed transitions each of
	// those parses the zone's TZ rule. Goroutines share it without a lock
	// (see spanCache).
	lastSpan spanCache
}

var _ scheduler.Trigger = (*Schedule)(nil)

// String returns the spec exactly as it was given to [Parse], including a
// CRON_TZ= or TZ= prefix if it had one (the zone given by [In] is not added).
func (s *Schedule) String() string { return s.spec }

// Next returns the first run time strictly after t, in the spec's zone, or
// the zero Time if there is none up to the end of year 9999 (the search
// stops there). t may be in any zone: only the instant counts. Run times are
// whole seconds, so a t with a fraction of a second is truncated first and
// the result is still strictly after t.
//
// Daylight-saving changes follow cronie and Debian's cron (and, for jumps
// of more than three hours, this package's own rule), as the package doc
// explains: a fixed-time job whose wall time is skipped runs once at the
// first instant after the gap, and one whose wall time occurs twice runs at
// the first occurrence only, so Next(t) with t between the two occurrences
// skips the second one (the run at the first occurrence already happened).
// A wildcard job runs at every real instant that matches.
//
// For "@every d", Next returns t plus d exactly, in the spec's zone.
//
// Next allocates nothing. Its cost grows with how far away the next run
// is; for the rarest specs (such as a February 29th that must be a Sunday)
// it scans a few decades of months.
func (s *Schedule) Next(t time.Time) time.Time {
	if s == nil || s.loc == nil {
		return time.Time{}
	}
	if s.every > 0 {
		return s.nextEvery(t)
	}
	from := t.Unix() + 1 // run times are whole seconds; Unix() floors
	var cache civilCache
	for first := true; ; first = false {
		var sp zoneSpan
		if first {
			sp = s.cachedSpanAt(from)
		} else {
			sp = spanAt(s.loc, from)
			// Walking span by span toward a run years away would cost
			// two zone lookups per span. Every run at an instant f has
			// its wall time (or the skipped one that makes it run)
			// within maxShift of f+sp.offset; so if no wall time from
			// maxShift before this span's start matches for 3*maxShift,
			// no run lies before the first match minus 2*maxShift.
			w, ok := s.nextCivil(from + sp.offset - maxShift)
			if !ok {
				return time.Time{}
			}
			if skip := w - sp.offset - 2*maxShift; skip > from+maxShift {
				from = skip
				continue
			}
		}
		if !s.wildcard && sp.hasStart && sp.start == from {
			// A fixed-time job whose wall time the clock jumped over at
			// this transition runs once, right at the transition.
			before := spanAt(s.loc, from-1).offset
			if sp.offset > before {
				if w, ok := cache.next(s, from+before); ok && w < from+sp.offset {
					return time.Unix(from, 0).In(s.loc)
				}
			}
		}
		wall := from + sp.offset
		for {
			w, ok := cache.next(s, wall)
			if !ok {
				return time.Time{}
			}
			instant := w - sp.offset
			if sp.hasEnd && instant >= sp.end {
				break // not in this zone span: look in the next one
			}
			if s.wildcard || !s.occurredBefore(w, instant, sp) {
				return time.Unix(instant, 0).In(s.loc)
			}
			wall = w + 1 // a repeated wall time of a fixed-time job
		}
		from = sp.end
	}
}

// cachedSpanAt returns spanAt(s.loc, sec), from the cache when the span
// cached last contains sec; otherwise it caches the span it looks up.
func (s *Schedule) cachedSpanAt(sec int64) zoneSpan {
	if c, ok := s.lastSpan.load(); ok && c.contains(sec) {
		return c
	}
	sp := spanAt(s.loc, sec)
	s.lastSpan.store(sp)
	return sp
}

// civilCache remembers the last answer of nextCivil: when Next walks from
// one zone span to the next, the wall time searched from moves forward by a
// few hours at most, and the answer found beyond the previous span usually
// holds again, so a rare spec is not searched for once per span.
type civilCache struct {
	from, found int64 // nextCivil(from) == found
	ok, valid   bool
}

// next returns s.nextCivil(from), reusing the cached answer when from lies
// between the cached from and the answer.
func (c *civilCache) next(s *Schedule, from int64) (int64, bool) {
	if c.valid && from >= c.from && (!c.ok || from <= c.found) {
		return c.found, c.ok
	}
	c.found, c.ok = s.nextCivil(from)
	c.from, c.valid = from, true
	return c.found, c.ok
}

// nextCivil returns the first wall time (in civil seconds) at or after from
// that matches every field, or false if there is none before year 10000.
func (s *Schedule) nextCivil(from int64) (int64, bool) {
	days := floorDiv(from, secondsPerDay)
	sod := int(from - days*secondsPerDay)
	y, mo, d := civilFromDays(days)
	h, mi, sec := sod/secondsPerHour, sod%secondsPerHour/secondsPerMinute, sod%secondsPerMinute
	for {
		if y > maxYear {
			return 0, false
		}
		if s.yearsRestricted {
			if v, ok := s.nextYear(y); !ok {
				return 0, false
			} else if v != y {
				y, mo, d, h, mi, sec = v, 1, 1, 0, 0, 0
			}
		}
		if v, ok := nextBit(uint64(s.month), mo); !ok {
			y, mo, d, h, mi, sec = y+1, 1, 1, 0, 0, 0
			continue
		} else if v != mo {
			mo, d, h, mi, sec = v, 1, 0, 0, 0
		}
		first := daysFromCivil(y, mo, 1)
		if v, ok := nextBit(uint64(s.dayMask(y, mo, first)), d); !ok {
			if mo++; mo > 12 {
				y, mo = y+1, 1
			}
			d, h, mi, sec = 1, 0, 0, 0
			continue
		} else if v != d {
			d, h, mi, sec = v, 0, 0, 0
		}
		if v, ok := nextBit(s.hour, h); !ok {
			d, h, mi, sec = d+1, 0, 0, 0
			continue
		} else if v != h {
			h, mi, sec = v, 0, 0
		}
		if v, ok := nextBit(s.minute, mi); !ok {
			h, mi, sec = h+1, 0, 0
			continue
		} else if v != mi {
			mi, sec = v, 0
		}
		if v, ok := nextBit(s.second, sec); !ok {
			mi, sec = mi+1, 0
			continue
		} else {
			sec = v
		}
		day := first + int64(d-1)
		return day*secondsPerDay + int64(h*secondsPerHour+mi*secondsPerMinute+sec), true
	}
}

// dayMask returns the days (bits 1-31) of month mo of year y that run;
// first is the day number of the month's 1st.
func (s *Schedule) dayMask(y int64, mo int, first int64) uint32 {
	return s.dayMaskOf(daysIn(y, mo), weekdayOfDays(first))
}

// dayMaskOf returns the days (bits 1-31) that run in a month of the given
// length whose 1st is weekday firstWeekday (Sunday = 0), applying Vixie's
// day-of-month/day-of-week rule, or Spring's and Quartz's rule that a day
// must match both.
func (s *Schedule) dayMaskOf(days, firstWeekday int) uint32 {
	byWeekday := s.dowDays[firstWeekday]
	if s.special {
		byWeekday |= s.dowSpecialDays(days, firstWeekday)
	}
	var m uint32
	if s.daysMatchBoth {
		m = s.domMask(days, firstWeekday) & byWeekday
	} else {
		m = s.domMask(days, firstWeekday) | byWeekday
	}
	return m & daysBits(days)
}

// domMask returns the days (bits 1-31) the day-of-month field selects in a
// month of the given length whose 1st is weekday firstWeekday.
func (s *Schedule) domMask(days, firstWeekday int) uint32 {
	if !s.special {
		return s.dom
	}
	return s.dom | s.domSpecialDays(days, firstWeekday)
}

// daysBits returns bits 1..n set.
func daysBits(n int) uint32 { return uint32(1)<<(n+1) - 2 }

// nextBit returns the lowest set bit of mask at or above from.
func nextBit(mask uint64, from int) (int, bool) {
	if from >= 64 {
		return 0, false
	}
	rest := mask >> uint(from)
	if rest == 0 {
		return 0, false
	}
	return from + bits.TrailingZeros64(rest), true
}
