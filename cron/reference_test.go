package cron_test

// An independent reference for Next, used by FuzzNext: it knows nothing of
// the package's internals. Specs are generated from fuzz bytes together with
// the sets of values they mean, and the reference scans instants one by one
// in UTC (minute by minute, or second by second for six-field specs),
// derives each instant's wall time in the zone with the time package, and
// applies the package's rules as they are worded:
//   - a wildcard job runs at every instant whose wall time matches;
//   - a fixed-time job runs at an instant whose wall time matches and did not
//     occur at any earlier instant, and at an instant where the wall clock
//     jumped forward over at least one matching wall time.
//
// Quartz's day forms are computed from their definitions with the time
// package (the last day of a month is day 0 of the next; the weekday
// nearest a day is the Monday-to-Friday day of the same month closest to
// it), Jenkins's H from the hash the package doc states (jenkinsHash), and
// a year field by checking the year.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cron"
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
	matchBoth   bool     // Vixie: a day field begins with '*' or is '?'
	wildcard    bool     // the minute or hour field begins with '*' or is H/n

	// Quartz's day forms: L-n (domLast[n]), L-nW (domLastW[n]), dW
	// (domNearW[d]), wL (dowLast[w]) and w#k (dowNth[w][k]).
	domLast, domLastW [31]bool
	domNearW          [32]bool
	dowLast           [7]bool
	dowNth            [7][6]bool

	withYear bool      // the spec has a year field
	years    [230]bool // 1970-2199, when yearsSet
	yearsSet bool      // the year field is not '*'
	hashKey  string    // the key for H
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
// reference to reach their runs. The byte after the fields, if any, adds
// the newer forms: bit 2 an H form in place of one field, bit 0 a Quartz
// form added to the day-of-month field's list, bit 1 one added to the
// day-of-week field's, bit 3 a year field, bit 4 '?' for a day field that
// is '*'.
func genSpec(data []byte, withSeconds bool) refSpec {
	src := &byteSource{data: data}
	g := refSpec{withSeconds: withSeconds}
	dense := src.next() % 16
	texts := make([]string, 6) // second minute hour dom month dow
	if withSeconds {
		texts[0], _ = genField(src, 0, 59, nil, 0, 0, g.second[:])
	} else {
		g.second[0] = true
	}
	texts[1], _ = genField(src, 0, 59, nil, 0, dense/4, g.minute[:])
	texts[2], _ = genField(src, 0, 23, nil, 0, dense/4, g.hour[:])
	texts[3], _ = genField(src, 1, 31, nil, 0, 8+dense, g.dom[:])
	texts[4], _ = genField(src, 1, 12, monthNames, 1, 8+dense, g.month[:])
	var dow8 [8]bool
	texts[5], _ = genField(src, 0, 7, dayNames, 0, 8+dense, dow8[:])
	extras := src.next()
	if extras&4 != 0 {
		g.hashKey = fmt.Sprintf("job-%d", src.next())
		i := 1 + src.next()%5
		if withSeconds && src.next()%3 == 0 {
			i = 0
		}
		texts[i] = g.genHash(src, i, dow8[:])
	}
	if extras&1 != 0 {
		texts[3] += "," + g.genDomForm(src)
	}
	if extras&2 != 0 {
		texts[5] += "," + g.genDowForm(src)
	}
	if extras&16 != 0 {
		if texts[3] == "*" {
			texts[3] = "?"
		} else if texts[5] == "*" {
			texts[5] = "?"
		}
	}
	copy(g.dow[:], dow8[:7])
	g.dow[0] = g.dow[0] || dow8[7]
	fields := texts[1:]
	if withSeconds {
		fields = texts
	}
	if extras&8 != 0 {
		g.withYear = true
		fields = append(fields, g.genYears(src))
	}
	g.text = strings.Join(fields, " ")
	dayStar := func(text string) bool { return strings.HasPrefix(text, "*") || text == "?" }
	g.matchBoth = dayStar(texts[3]) || dayStar(texts[5])
	timeStar := func(text string) bool { return strings.HasPrefix(text, "*") || strings.HasPrefix(text, "H/") }
	g.wildcard = timeStar(texts[1]) || timeStar(texts[2])
	return g
}

// genDomForm returns L, L-n, LW, L-nW or dW and marks it.
func (g *refSpec) genDomForm(src *byteSource) string {
	kind, n := src.next()%3, src.next()
	switch kind {
	case 0:
		g.domLast[n%31] = true
		if n%31 == 0 {
			return "L"
		}
		return fmt.Sprintf("L-%d", n%31)
	case 1:
		g.domLastW[n%31] = true
		if n%31 == 0 {
			return "LW"
		}
		return fmt.Sprintf("L-%dW", n%31)
	default:
		g.domNearW[1+n%31] = true
		return fmt.Sprintf("%dW", 1+n%31)
	}
}

// genDowForm returns wL or w#k (w a number 0-7 or a name) and marks it.
func (g *refSpec) genDowForm(src *byteSource) string {
	kind, v, k := src.next()%2, src.next()%8, 1+src.next()%5
	w := v % 7
	text := strconv.Itoa(v)
	if v < 7 && src.next()%2 == 0 {
		text = dayNames[v]
	}
	if kind == 0 {
		g.dowLast[w] = true
		return text + "L"
	}
	g.dowNth[w][k] = true
	return fmt.Sprintf("%s#%d", text, k)
}

// hashFields are the fields H can be generated in, indexed as genSpec's
// texts: their names (for the hash), H's range, and their full range.
var hashFields = [6]struct {
	name           string
	hashLo, hashHi int
	lo, hi         int
}{
	{"second", 0, 59, 0, 59}, {"minute", 0, 59, 0, 59}, {"hour", 0, 23, 0, 23},
	{"day-of-month", 1, 28, 1, 31}, {"month", 1, 12, 1, 12}, {"day-of-week", 0, 6, 0, 7},
}

// genHash returns an H form for field i (H, H(a-b), H/n or H(a-b)/n) and
// sets that field's values to the ones it stands for.
func (g *refSpec) genHash(src *byteSource, i int, dow8 []bool) string {
	f := hashFields[i]
	set := [][]bool{g.second[:], g.minute[:], g.hour[:], g.dom[:], g.month[:], dow8}[i]
	clear(set)
	lo, hi := f.hashLo, f.hashHi
	kind := src.next() % 4
	text := "H"
	if kind%2 == 1 {
		a, b := f.lo+src.next()%(f.hi-f.lo+1), f.lo+src.next()%(f.hi-f.lo+1)
		lo, hi = min(a, b), max(a, b)
		text = fmt.Sprintf("H(%d-%d)", lo, hi)
	}
	h := jenkinsHash(g.hashKey, f.name)
	if kind < 2 {
		set[lo+int(h%uint64(hi-lo+1))] = true
		return text
	}
	step := 1 + src.next()%(hi-lo+1)
	for v := lo + int(h%uint64(step)); v <= hi; v += step {
		set[v] = true
	}
	return fmt.Sprintf("%s/%d", text, step)
}

// genYears returns a year field and marks its years: mostly years near the
// fuzzed start times, whose runs the reference can reach.
func (g *refSpec) genYears(src *byteSource) string {
	year := func() int { return 1970 + (src.next()*7+src.next())%230 }
	switch src.next() % 5 {
	case 0:
		return "*"
	case 1:
		y := year()
		g.years[y-1970], g.yearsSet = true, true
		return strconv.Itoa(y)
	case 2:
		a, b := year(), year()
		a, b = min(a, b), max(a, b)
		for y := a; y <= b; y++ {
			g.years[y-1970] = true
		}
		g.yearsSet = true
		return fmt.Sprintf("%d-%d", a, b)
	case 3:
		a, step := year(), 1+src.next()%10
		for y := a; y <= 2199; y += step {
			g.years[y-1970] = true
		}
		g.yearsSet = true
		return fmt.Sprintf("%d/%d", a, step)
	default:
		a, b := year(), year()
		g.years[a-1970], g.years[b-1970], g.yearsSet = true, true, true
		return fmt.Sprintf("%d,%d", a, b)
	}
}

// options returns the Parse options the spec needs besides the zone.
func (g *refSpec) options() []cron.Option {
	var opts []cron.Option
	if g.withSeconds {
		opts = append(opts, cron.WithSeconds())
	}
	if g.withYear {
		opts = append(opts, cron.WithYear())
	}
	if g.hashKey != "" {
		opts = append(opts, cron.WithHashKey(g.hashKey))
	}
	return opts
}

// matches reports whether the wall time w (a time in UTC holding wall
// fields) matches the spec.
func (g *refSpec) matches(w time.Time) bool {
	return g.second[w.Second()] && g.minute[w.Minute()] && g.hour[w.Hour()] && g.dayMatches(w)
}

// runsSomeDay reports whether any day matches the date fields: with a
// year field, any day of its years; otherwise any day of a whole 400-year
// Gregorian cycle (the cycle repeats, so none ever does otherwise).
func (g *refSpec) runsSomeDay() bool {
	day, end := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)
	if g.yearsSet {
		day, end = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	for ; day.Before(end); day = day.AddDate(0, 0, 1) {
		if g.dayMatches(day) {
			return true
		}
	}
	return false
}

// domMatches reports whether the date of day matches the day-of-month
// field, with its Quartz forms.
func (g *refSpec) domMatches(day time.Time) bool {
	d, last := day.Day(), daysInMonth(day)
	if g.dom[d] || (last-d <= 30 && g.domLast[last-d]) {
		return true
	}
	for n, ok := range g.domLastW {
		if ok && last-n >= 1 && nearestWeekdayRef(day, last-n) == d {
			return true
		}
	}
	for target, ok := range g.domNearW {
		if ok && target <= last && nearestWeekdayRef(day, target) == d {
			return true
		}
	}
	return false
}

// dowMatches reports whether the date of day matches the day-of-week
// field, with its Quartz forms.
func (g *refSpec) dowMatches(day time.Time) bool {
	w, d := day.Weekday(), day.Day()
	return g.dow[w] || (g.dowLast[w] && d+7 > daysInMonth(day)) || g.dowNth[w][(d-1)/7+1]
}

// daysInMonth returns the number of days in day's month: the day before
// the 1st of the next month.
func daysInMonth(day time.Time) int {
	return time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// nearestWeekdayRef returns the Monday-to-Friday day of day's month that
// is closest to day target of that month (the earlier one on a tie).
func nearestWeekdayRef(day time.Time, target int) int {
	best := 0
	for d := 1; d <= daysInMonth(day); d++ {
		wd := time.Date(day.Year(), day.Month(), d, 0, 0, 0, 0, time.UTC).Weekday()
		if wd == time.Saturday || wd == time.Sunday {
			continue
		}
		if best == 0 || abs(d-target) < abs(best-target) {
			best = d
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
// year, month and day fields.
func (g *refSpec) dayMatches(day time.Time) bool {
	if y := day.Year(); g.yearsSet && (y < 1970 || y > 2199 || !g.years[y-1970]) {
		return false
	}
	if !g.month[day.Month()] {
		return false
	}
	domOK, dowOK := g.domMatches(day), g.dowMatches(day)
	if g.matchBoth {
		return domOK && dowOK
	}
	return domOK || dowOK
}
