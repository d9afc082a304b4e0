package cron

import (
	"fmt"
	"strconv"
	"strings"
)

// field describes one field of a spec: its name in error messages, its
// range, the names it accepts (names[i] stands for value i+nameBase), and
// its kind, which decides the special characters it accepts.
type field struct {
	name     string
	min, max int
	names    []string
	nameBase int
	kind     fieldKind
}

// fieldKind tells the day fields and the year apart from the time fields.
type fieldKind int

const (
	timeKind fieldKind = iota // second, minute, hour, month: values only
	domKind                   // day of month: also ?, L, L-n, LW, L-nW, nW
	dowKind                   // day of week: also ?, nL, n#k
	yearKind                  // year: values only, no H
)

var (
	secondField = field{name: "second", min: 0, max: 59}
	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31, kind: domKind}
	monthField  = field{name: "month", min: 1, max: 12, nameBase: 1,
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}}
	dayNames = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
	// dowField numbers Sunday 0 (and 7), as Vixie cron, cronie and Spring do.
	dowField = field{name: "day-of-week", min: 0, max: 7, names: dayNames, kind: dowKind}
	// quartzDowField numbers Sunday 1 and Saturday 7, as Quartz does.
	quartzDowField = field{name: "day-of-week", min: 1, max: 7, names: dayNames, nameBase: 1, kind: dowKind}
	yearField      = field{name: "year", min: minYearField, max: maxYearField, kind: yearKind}
)

// The years a year field accepts. A Schedule keeps one bit per year.
const (
	minYearField = 1970
	maxYearField = 2199
)

// bitset holds one bit per value of a field, value v at bit v-f.min for
// the year field and at bit v for the others.
type bitset [4]uint64

func (b *bitset) add(i int) { b[i/64] |= 1 << (i % 64) }

func (b *bitset) has(i int) bool { return i >= 0 && i < 256 && b[i/64]&(1<<(i%64)) != 0 }

// fieldValues is what one field's text selects.
type fieldValues struct {
	set bitset // plain values

	// Day of month only: bit n of last is L-n (L is n = 0), of lastWeekday
	// L-nW (LW is n = 0); bit d of nearWeekday is dW.
	last, lastWeekday, nearWeekday uint32

	// Day of week only, weekdays numbered Sunday = 0: bit w of lastOf is
	// the month's last weekday w (wL); bit k of nth[w] its k-th (w#k).
	lastOf uint8
	nth    [7]uint8
}

// special reports whether v uses L, W or #.
func (v *fieldValues) special() bool {
	return v.last|v.lastWeekday|v.nearWeekday != 0 || v.lastOf != 0 || v.nth != [7]uint8{}
}

// fieldParser parses the fields of one spec under one configuration.
type fieldParser struct {
	dialect    dialect
	hashKey    string
	hasHashKey bool
}

// parseField parses one field's text, which starts at column col of the
// spec.
func (p *fieldParser) parseField(text string, col int, f field) (fieldValues, error) {
	var v fieldValues
	if text == "" {
		return v, fieldError(f.name, text, col, "empty")
	}
	at := col
	for part := range strings.SplitSeq(text, ",") {
		if err := p.parseElement(part, at, f, &v); err != nil {
			return v, fieldError(f.name, text, err.col, "%s", err.msg)
		}
		at += len(part) + 1
	}
	return v, nil
}

// parseElement parses one list element, starting at column col, into v.
func (p *fieldParser) parseElement(part string, col int, f field, v *fieldValues) *elementError {
	switch {
	case part == "":
		return errAt(col, "empty list element")
	case part == "?":
		if f.kind != domKind && f.kind != dowKind {
			return errAt(col, "? is accepted only in day-of-month and day-of-week (want %s)", p.accepted(f))
		}
		return p.addRange(v, f, f.min, f.max, 1)
	case part[0] == 'H' || part[0] == 'h':
		return p.parseHash(part, col, f, v)
	case f.kind == domKind && (part[0] == 'L' || part[0] == 'l'):
		return parseLast(part, col, v)
	case f.kind == domKind && (part[len(part)-1] == 'W' || part[len(part)-1] == 'w'):
		d, err := parseValue(part[:len(part)-1], f)
		if err != nil {
			return errAt(col, "%s before W (want dW, the weekday nearest day d, d in 1-31)", err)
		}
		v.nearWeekday |= 1 << d
		return nil
	case f.kind == dowKind && strings.Contains(part, "#"):
		dayText, nText, _ := strings.Cut(part, "#")
		w, err := p.weekday(dayText, f)
		if err != nil {
			return errAt(col, "%s before # (want d#k, the k-th weekday d of the month)", err)
		}
		k, err := parseNumber(nText)
		if err != nil || k < 1 || k > 5 {
			return errAt(col+len(dayText)+1, "%q after # is not a number in 1-5 (want d#k, the k-th weekday d of the month)", nText)
		}
		v.nth[w] |= 1 << k
		return nil
	case f.kind == dowKind && len(part) > 1 && (part[len(part)-1] == 'L' || part[len(part)-1] == 'l'):
		w, err := p.weekday(part[:len(part)-1], f)
		if err != nil {
			return errAt(col, "%s before L (want dL, the last weekday d of the month)", err)
		}
		v.lastOf |= 1 << w
		return nil
	}
	lo, hi, step, err := p.parseRange(part, col, f)
	if err != nil {
		return err
	}
	return p.addRange(v, f, lo, hi, step)
}

// parseRange parses *, a, a-b, */n, a-b/n or a/n into the values lo to hi
// by step.
func (p *fieldParser) parseRange(part string, col int, f field) (lo, hi, step int, _ *elementError) {
	rangeText, stepText, hasStep := strings.Cut(part, "/")
	switch loText, hiText, isRange := strings.Cut(rangeText, "-"); {
	case rangeText == "*":
		lo, hi = f.min, f.max
	case isRange:
		var err error
		if lo, err = parseValue(loText, f); err != nil {
			return 0, 0, 0, errAt(col, "%s", p.explain(err, f))
		}
		if hi, err = parseValue(hiText, f); err != nil {
			return 0, 0, 0, errAt(col+len(loText)+1, "%s", p.explain(err, f))
		}
		if f.kind == dowKind && p.dialect != quartzDialect && hi == 0 && lo > 0 {
			// Vixie cron and cronie read a day-of-week range ending in
			// Sunday's 0 as ending in Sunday's 7: MON-SUN, 5-0, SAT-0.
			hi = 7
		}
		if lo > hi && p.dialect == quartzDialect && f.kind != yearKind {
			// Quartz wraps a backward range around the field's end:
			// 22-2 in hours is 22, 23, 0, 1, 2; FRI-MON is Friday to
			// Monday. The caller steps from lo and wraps each value.
			hi += f.max - f.min + 1
		}
		if lo > hi {
			return 0, 0, 0, errAt(col, "range %q runs backwards (want a-b with a <= b)", rangeText)
		}
	default:
		var err error
		if lo, err = parseValue(rangeText, f); err != nil {
			return 0, 0, 0, errAt(col, "%s", p.explain(err, f))
		}
		hi = lo
		if hasStep {
			hi = f.max // Vixie: a/n is a-max/n
		}
	}
	step = 1
	if hasStep {
		n, err := parseNumber(stepText)
		if err != nil || n < 1 || n > f.max-f.min+1 {
			return 0, 0, 0, errAt(col+len(rangeText)+1, "step %q is not a number in 1-%d", stepText, f.max-f.min+1)
		}
		step = n
	}
	return lo, hi, step, nil
}

// addRange adds the values lo to hi by step to v.
func (p *fieldParser) addRange(v *fieldValues, f field, lo, hi, step int) *elementError {
	base := 0
	if f.kind == yearKind {
		base = f.min
	}
	span := f.max - f.min + 1
	for x := lo; x <= hi; x += step {
		v.set.add(f.min + (x-f.min)%span - base) // a Quartz range may wrap
	}
	return nil
}

// parseLast parses L, L-n, LW and L-nW in the day-of-month field.
func parseLast(part string, col int, v *fieldValues) *elementError {
	const want = "want L, L-n, LW or L-nW, n in 0-30"
	rest := part[1:]
	weekday := false
	if n := len(rest); n > 0 && (rest[n-1] == 'W' || rest[n-1] == 'w') {
		weekday, rest = true, rest[:n-1]
	}
	offset := 0
	if rest != "" {
		nText, ok := strings.CutPrefix(rest, "-")
		n, err := parseNumber(nText)
		if !ok || err != nil || n > 30 {
			return errAt(col, "%q is not a last-day form (%s)", part, want)
		}
		offset = n
	}
	if weekday {
		v.lastWeekday |= 1 << offset
	} else {
		v.last |= 1 << offset
	}
	return nil
}

// weekday parses a day-of-week value or name and returns its weekday,
// Sunday = 0.
func (p *fieldParser) weekday(text string, f field) (int, error) {
	n, err := parseValue(text, f)
	if err != nil {
		return 0, err
	}
	return weekdayOf(n, p.dialect), nil
}

// weekdayOf returns the weekday (Sunday = 0) that the day-of-week value n
// stands for in the dialect.
func weekdayOf(n int, d dialect) int {
	if d == quartzDialect {
		return n - 1
	}
	return n % 7
}

// accepted describes the forms field f accepts, for error messages.
func (p *fieldParser) accepted(f field) string {
	var forms string
	switch {
	case f.kind == dowKind && p.dialect == quartzDialect:
		forms = "*, ?, 1-7 (1 is Sunday) or SUN-SAT, a-b, a/n, a-b/n, dL, d#k"
	case f.kind == dowKind:
		forms = "*, ?, 0-7 (0 and 7 are Sunday) or SUN-SAT, a-b, a/n, a-b/n, dL, d#k"
	case f.kind == domKind:
		forms = "*, ?, 1-31, a-b, a/n, a-b/n, L, L-n, LW, L-nW, dW"
	case f.names != nil:
		forms = fmt.Sprintf("*, %d-%d or %s-%s, a-b, a/n, a-b/n", f.min, f.max, f.names[0], f.names[len(f.names)-1])
	default:
		forms = fmt.Sprintf("*, %d-%d, a-b, a/n, a-b/n", f.min, f.max)
	}
	if f.kind != yearKind && p.hasHashKey {
		forms += ", H, H(a-b), H/n, H(a-b)/n"
	}
	return forms
}

// outOfRangeError is parseValue's error for a number outside the field's
// range; the message already says what is accepted.
type outOfRangeError struct {
	text     string
	min, max int
}

func (e *outOfRangeError) Error() string {
	return fmt.Sprintf("%s is out of range %d-%d", e.text, e.min, e.max)
}

// explain returns err's message, followed by the forms f accepts unless err
// already says them.
func (p *fieldParser) explain(err error, f field) string {
	if _, ok := err.(*outOfRangeError); ok {
		return err.Error()
	}
	return fmt.Sprintf("%v (want %s)", err, p.accepted(f))
}

// parseValue parses a number in f's range or one of f's names.
func parseValue(text string, f field) (int, error) {
	if n, err := parseNumber(text); err == nil {
		if n < f.min || n > f.max {
			return 0, &outOfRangeError{text, f.min, f.max}
		}
		return n, nil
	}
	for i, name := range f.names {
		if strings.EqualFold(text, name) {
			return i + f.nameBase, nil
		}
	}
	if f.names != nil {
		return 0, fmt.Errorf("%q is neither a number nor a name %s-%s", text, f.names[0], f.names[len(f.names)-1])
	}
	return 0, fmt.Errorf("%q is not a number", text)
}

// parseNumber parses a string of 1 to 4 ASCII digits (no sign, no spaces).
func parseNumber(text string) (int, error) {
	if text == "" || len(text) > 4 {
		return 0, fmt.Errorf("%q is not a number", text)
	}
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a number", text)
		}
	}
	return strconv.Atoi(text)
}
