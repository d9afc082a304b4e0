package cron

import "time"

// maxShift bounds how far apart two instants with the same wall time can
// be: the largest difference between two UTC offsets a zone ever had
// (about 24 hours, Asia/Manila's 1844 date-line change), with margin.
const maxShift = 48 * secondsPerHour

// zoneSpan is a stretch of instants [start, end) with one UTC offset in a
// zone (a period between two transitions, from time.Time.ZoneBounds).
type zoneSpan struct {
	start, end       int64 // Unix seconds; valid only with hasStart / hasEnd
	hasStart, hasEnd bool  // false: the span reaches the beginning / end of time
	offset           int64 // seconds east of UTC; wall = instant + offset
}

// contains reports whether the instant sec lies in sp.
func (sp *zoneSpan) contains(sec int64) bool {
	return (!sp.hasStart || sp.start <= sec) && (!sp.hasEnd || sec < sp.end)
}

// spanAt returns the zone span of loc that contains the instant sec.
func spanAt(loc *time.Location, sec int64) zoneSpan {
	t := time.Unix(sec, 0).In(loc)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	sp := zoneSpan{
		start: start.Unix(), hasStart: !start.IsZero(),
		end: end.Unix(), hasEnd: !end.IsZero(),
		offset: int64(off),
	}
	if sp.hasEnd && sp.end <= sec {
		// Past a zone's last listed transition, the time package derives
		// offsets from the zone's TZ rule and clips the bounds to UTC
		// years, ending a leap year's last span one day early (Go 1.26).
		// The offset is right; end the span at the next UTC midnight,
		// where the next lookup starts afresh (no rule changes on Dec 31).
		sp.end = (floorDiv(sec, secondsPerDay) + 1) * secondsPerDay
	}
	return sp
}

// occurredBefore reports whether the wall time w, which occurs at instant
// inside span sp, already occurred at an earlier instant: when the clock was
// set back, a wall time occurs once before and once after the change, and a
// fixed-time job runs only at the first. An earlier occurrence lies in an
// earlier span with a larger offset, at most maxShift before instant.
func (s *Schedule) occurredBefore(w, instant int64, sp zoneSpan) bool {
	if !sp.hasStart || instant-sp.start >= maxShift {
		return false
	}
	cur := sp.start
	for {
		p := spanAt(s.loc, cur-1)
		if p.offset > sp.offset {
			if at := w - p.offset; (!p.hasStart || at >= p.start) && at < cur {
				return true
			}
		}
		if !p.hasStart || p.start <= instant-maxShift {
			return false
		}
		cur = p.start
	}
}
