package cron_test

// An independent reference for Next, used by FuzzNext: it knows nothing of
// the package's internals. Specs are generated from fuzz bytes together with
// the sets of values they mean, and the reference scans instants one by one
// in UTC (minute by minute, or second by second for six-field specs),
// derives each instant's wall time in the zone with the time package, and
// applies R-23d's rules as they are worded:
//   - a wildcard job runs at every instant whose wall time matches;
//   - a fixed-time job runs at an instant whose wall time matches and did not
//     occur at any earlier instant, and at an instant where the wall clock
//     jumped forward over at least one matching wall time.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// refSpec is a generated spec: its text and what it means.
type refSpec struct {
	text        string
	withSeconds bool
	second      [60]bool
	minute      [60]bool
	hour        [24]bool
	dom         [32]bool // 1-31
	month       [13]bool // 1-12
	dow         [7]bool  // 0-6, Sunday = 0
	matchBoth   bool     // Vixie: a day field begins with '*'
	wildcard    bool     // the minute or hour field begins with '*'
}

// byteSource hands out fuzz bytes, then zeros.
type byteSource struct {
	data []byte
	pos  int
}

func (b *byteSource) next() int {
	if b.pos >= len(b.data) {
		b.pos++
		return 0
	}
	v := b.data[b.pos]
	b.pos++
	return int(v)
}

var (
	monthNames = []string{"jan", "FEB", "Mar", "APR", "may", "JUN", "jul", "AUG", "sep", "OCT", "nov", "DEC"}
	dayNames   = []string{"SUN", "mon", "Tue", "WED", "thu", "FRI", "sat"}
)

// genField writes one field of range [lo, hi] and marks its values in set
// (indexed by value). dense > 0 makes '*' likelier. It reports whether the
// field text begins with '*'.
func genField(src *byteSource, lo, hi int, names []string, nameBase int, dense int, set []bool) (string, bool) {
	name := func(v int) string {
		if names != nil && v-nameBase >= 0 && v-nameBase < len(names) && src.next()%3 == 0 {
			return names[v-nameBase]
		}
		return strconv.Itoa(v)
	}
	value := func() int { return lo + src.next()%(hi-lo+1) }
	mark := func(a, b, step int) {
		for v := a; v <= b; v += step {
			set[v] = true
		}
	}
	kind := src.next() % (8 + dense)
	if kind >= 8 {
		kind = 0
	}
	switch kind {
	case 0:
		mark(lo, hi, 1)
		return "*", true
	case 1:
		step := 1 + src.next()%(hi-lo+1)
		mark(lo, hi, step)
		return fmt.Sprintf("*/%d", step), true
	case 2, 3:
		v := value()
		mark(v, v, 1)
		return name(v), false
	case 4:
		a, b := value(), value()
		if a > b {
			a, b = b, a
		}
		mark(a, b, 1)
		return name(a) + "-" + name(b), false
	case 5:
		a, b := value(), value()
		if a > b {
			a, b = b, a
		}
		step := 1 + src.next()%(hi-lo+1)
		mark(a, b, step)
		return fmt.Sprintf("%s-%s/%d", name(a), name(b), step), false
	case 6:
		a := value()
		step := 1 + src.next()%(hi-lo+1)
		mark(a, hi, step)
		return fmt.Sprintf("%s/%d", name(a), step), false
	default:
		n := 2 + src.next()%3
		parts := make([]string, n)
		for i := range parts {
			if src.next()%2 == 0 {
				v := value()
				mark(v, v, 1)
				parts[i] = name(v)
			} else {
				a, b := value(), value()
				if a > b {
					a, b = b, a
				}
				mark(a, b, 1)
				parts[i] = name(a) + "-" + name(b)
			}
		}
		return strings.Join(parts, ","), false
	}
}

// genSpec builds a spec from fuzz bytes. The first byte sets how dense the
// day and month fields are, so that most specs run often enough for the
// reference to reach their runs.
func genSpec(data []byte, withSeconds bool) refSpec {
	src := &byteSource{data: data}
	g := refSpec{withSeconds: withSeconds}
	dense := src.next() % 16
	var fields []string
	if withSeconds {
		text, _ := genField(src, 0, 59, nil, 0, 0, g.second[:])
		fields = append(fields, text)
	} else {
		g.second[0] = true
	}
	minText, minStar := genField(src, 0, 59, nil, 0, dense/4, g.minute[:])
	hourText, hourStar := genField(src, 0, 23, nil, 0, dense/4, g.hour[:])
	domText, domStar := genField(src, 1, 31, nil, 0, 8+dense, g.dom[:])
	monthText, _ := genField(src, 1, 12, monthNames, 1, 8+dense, g.month[:])
	var dow8 [8]bool
	dowText, dowStar := genField(src, 0, 7, dayNames, 0, 8+dense, dow8[:])
	copy(g.dow[:], dow8[:7])
	g.dow[0] = g.dow[0] || dow8[7]
	fields = append(fields, minText, hourText, domText, monthText, dowText)
	g.text = strings.Join(fields, " ")
	g.matchBoth = domStar || dowStar
	g.wildcard = minStar || hourStar
	return g
}

// matches reports whether the wall time w (a time in UTC holding wall
// fields) matches the spec.
func (g *refSpec) matches(w time.Time) bool {
	if !g.second[w.Second()] || !g.minute[w.Minute()] || !g.hour[w.Hour()] || !g.month[w.Month()] {
		return false
	}
	domOK, dowOK := g.dom[w.Day()], g.dow[w.Weekday()]
	if g.matchBoth {
		return domOK && dowOK
	}
	return domOK || dowOK
}

// runsSomeDay reports whether any day of a whole 400-year Gregorian cycle
// matches the day and month fields (the cycle repeats, so none ever does
// otherwise).
func (g *refSpec) runsSomeDay() bool {
	day := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for end := day.AddDate(400, 0, 0); day.Before(end); day = day.AddDate(0, 0, 1) {
		if !g.month[day.Month()] {
			continue
		}
		domOK, dowOK := g.dom[day.Day()], g.dow[day.Weekday()]
		if (g.matchBoth && domOK && dowOK) || (!g.matchBoth && (domOK || dowOK)) {
			return true
		}
	}
	return false
}

// wallOf returns the wall time of the instant u (Unix seconds) in loc, as
// a time in UTC with the same fields.
func wallOf(u int64, loc *time.Location) time.Time {
	t := time.Unix(u, 0).In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// refNext returns the first run strictly after t found by scanning up to
// horizon past t, and false if there is none in that stretch.
func (g *refSpec) refNext(loc *time.Location, t time.Time, horizon time.Duration) (time.Time, bool) {
	step := int64(60)
	if g.withSeconds {
		step = 1
	}
	start := t.Unix()
	u := start - ((start%step)+step)%step + step // first grid instant > t
	for end := start + int64(horizon/time.Second); u <= end; u += step {
		w := wallOf(u, loc)
		if g.matches(w) && (g.wildcard || !occurredEarlier(w, u, loc)) {
			return time.Unix(u, 0), true
		}
		if g.wildcard {
			continue
		}
		prev := wallOf(u-step, loc)
		stepDur := time.Duration(step) * time.Second
		if w.Sub(prev) > stepDur { // the wall clock jumped forward at u
			for skipped := prev.Add(stepDur); skipped.Before(w); skipped = skipped.Add(stepDur) {
				if g.matches(skipped) {
					return time.Unix(u, 0), true
				}
			}
		}
	}
	return time.Time{}, false
}

// occurredEarlier reports whether the wall time w of instant u was also the
// wall time of an instant up to 30 hours before u. Offsets in the fuzzed
// zones are whole minutes, so such an instant is a whole number of minutes
// before u.
func occurredEarlier(w time.Time, u int64, loc *time.Location) bool {
	for v := u - 60; v >= u-30*3600; v -= 60 {
		if wallOf(v, loc).Equal(w) {
			return true
		}
	}
	return false
}

// refNextFar extends refNext to runs years away, for five-field specs: it
// first finds, day by day, the first date from two days before t's wall
// date whose day and month match (a run needs such a date, and its wall
// time lies within 48 hours of the run's instant), then scans instants from
// 48 hours before that date's midnight (or from t). It returns the run, or
// false and the instant up to which it found none. Dates are searched up to
// 60 years ahead.
func (g *refSpec) refNextFar(loc *time.Location, t time.Time, horizon time.Duration) (time.Time, bool, time.Time) {
	w := wallOf(t.Unix(), loc)
	day := time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
	for end := day.AddDate(60, 0, 0); !g.dayMatches(day); day = day.AddDate(0, 0, 1) {
		if day.After(end) {
			return time.Time{}, false, t.AddDate(60, 0, 0)
		}
	}
	start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc).Add(-48 * time.Hour)
	if start.Before(t) {
		start = t
	}
	run, ok := g.refNext(loc, start, horizon)
	return run, ok, start.Add(horizon)
}

// dayMatches reports whether the date of day (a time in UTC) matches the
// month and the day fields.
func (g *refSpec) dayMatches(day time.Time) bool {
	if !g.month[day.Month()] {
		return false
	}
	domOK, dowOK := g.dom[day.Day()], g.dow[day.Weekday()]
	if g.matchBoth {
		return domOK && dowOK
	}
	return domOK || dowOK
}
