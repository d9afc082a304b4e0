package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-stpe/scheduler"
)

// field describes one field of a spec: its name in error messages, its
// range, and the names it accepts (names[i] stands for value i+nameBase).
type field struct {
	name     string
	min, max int
	names    []string
	nameBase int
}

var (
	secondField = field{name: "second", min: 0, max: 59}
	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31}
	monthField  = field{name: "month", min: 1, max: 12, nameBase: 1,
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}}
	dowField = field{name: "day-of-week", min: 0, max: 7,
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}}
)

// descriptors maps each @-descriptor to its five fields.
var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// Parse parses a cron spec: five fields (minute hour day-of-month month
// day-of-week), or six with [WithSeconds] (a seconds field first), or a
// descriptor (@yearly @annually @monthly @weekly @daily @midnight
// @hourly), optionally after a CRON_TZ=Zone or TZ=Zone prefix that
// overrides [In]. It is Spring's CronExpression.parse, Quartz's
// CronExpression constructor and robfig/cron's Parser.Parse.
//
// Each field is '*' or a comma-separated list of values, ranges (a-b) and
// steps (*/n, a-b/n, and a/n meaning a-max/n); months take JAN-DEC and
// weekdays SUN-SAT in any case; day-of-week 7 is Sunday too. Day-of-month
// and day-of-week follow Vixie cron: if either field begins with '*', a day
// must match both; otherwise a day matching either runs.
//
// The error wraps scheduler.ErrInvalidArgument and names the bad field (or
// the zone, or the field count) for a syntax error, a value out of range,
// an unknown zone, a wrong number of fields, and a spec that can never run
// (such as "0 0 30 2 *"; "0 0 29 2 *" is fine, it runs in leap years).
func Parse(spec string, opts ...Option) (*Schedule, error) {
	cfg := config{loc: time.Local}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("cron: nil Option: %w", scheduler.ErrInvalidArgument)
		}
		opt(&cfg)
	}
	if cfg.loc == nil {
		return nil, fmt.Errorf("cron: In(nil): a nil *time.Location: %w", scheduler.ErrInvalidArgument)
	}
	loc, rest, err := zonePrefix(spec, cfg.loc)
	if err != nil {
		return nil, err
	}
	fields, err := splitFields(spec, rest, cfg.withSeconds)
	if err != nil {
		return nil, err
	}
	s := &Schedule{spec: spec, loc: loc}
	if err := s.setFields(fields); err != nil {
		return nil, err
	}
	return s, nil
}

// MustParse is like [Parse] but panics if the spec is invalid. It is meant
// for specs written in the program's source, as regexp.MustCompile is.
func MustParse(spec string, opts ...Option) *Schedule {
	s, err := Parse(spec, opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// zonePrefix strips a CRON_TZ=Zone or TZ=Zone prefix from spec and returns
// its zone, or loc and the spec unchanged if there is no prefix.
func zonePrefix(spec string, loc *time.Location) (*time.Location, string, error) {
	rest := strings.TrimSpace(spec)
	var name string
	for _, prefix := range []string{"CRON_TZ=", "TZ="} {
		if after, ok := strings.CutPrefix(rest, prefix); ok {
			name, rest = after, ""
			if i := strings.IndexFunc(after, unicode.IsSpace); i >= 0 {
				name, rest = after[:i], after[i:]
			}
			if name == "" {
				return nil, "", specError(spec, "%s with no zone name", prefix)
			}
			zone, err := time.LoadLocation(name)
			if err != nil {
				return nil, "", fmt.Errorf("cron: time zone %q: %v: %w", name, err, scheduler.ErrInvalidArgument)
			}
			return zone, rest, nil
		}
	}
	return loc, rest, nil
}

// splitFields returns the six field texts (seconds first; "0" when the spec
// has none) of the spec after its zone prefix.
func splitFields(spec, rest string, withSeconds bool) ([]string, error) {
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "@") {
		std, ok := descriptors[strings.ToLower(rest)]
		if !ok {
			return nil, specError(spec, "unknown descriptor %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)", rest)
		}
		return append([]string{"0"}, strings.Fields(std)...), nil
	}
	fields := strings.Fields(rest)
	if withSeconds {
		if len(fields) != 6 {
			return nil, specError(spec, "%d fields, want 6 (second minute hour day-of-month month day-of-week)", len(fields))
		}
		return fields, nil
	}
	if len(fields) != 5 {
		return nil, specError(spec, "%d fields, want 5 (minute hour day-of-month month day-of-week)", len(fields))
	}
	return append([]string{"0"}, fields...), nil
}

// setFields parses the six field texts into s and checks that s can run.
func (s *Schedule) setFields(f []string) error {
	var err error
	if s.second, err = parseField(f[0], secondField); err != nil {
		return err
	}
	if s.minute, err = parseField(f[1], minuteField); err != nil {
		return err
	}
	if s.hour, err = parseField(f[2], hourField); err != nil {
		return err
	}
	dom, err := parseField(f[3], domField)
	if err != nil {
		return err
	}
	month, err := parseField(f[4], monthField)
	if err != nil {
		return err
	}
	dow, err := parseField(f[5], dowField)
	if err != nil {
		return err
	}
	if dow&(1<<7) != 0 { // 7 is Sunday
		dow = dow&^(1<<7) | 1
	}
	s.dom, s.month, s.dow = uint32(dom), uint16(month), uint8(dow)
	s.daysMatchBoth = strings.HasPrefix(f[3], "*") || strings.HasPrefix(f[5], "*")
	s.wildcard = strings.HasPrefix(f[1], "*") || strings.HasPrefix(f[2], "*")
	for first := range 7 {
		for d := 1; d <= 31; d++ {
			if s.dow&(1<<((first+d-1)%7)) != 0 {
				s.dowDays[first] |= 1 << d
			}
		}
	}
	return s.checkCanRun(f[3], f[4])
}

// checkCanRun rejects a spec whose days never exist. When a day must match
// both day fields, some allowed month must have an allowed day of month
// (February counted with 29 days): every such date falls on every weekday
// within the 400-year Gregorian cycle, so the weekday field cannot make it
// impossible. When either day field may match, every month has every
// weekday, so the spec always runs.
func (s *Schedule) checkCanRun(domText, monthText string) error {
	if !s.daysMatchBoth {
		return nil
	}
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) != 0 && s.dom&daysBits(maxDaysIn(m)) != 0 {
			return nil
		}
	}
	return fieldError(domField.name, domText, "no such day in month field %q, the schedule would never run", monthText)
}

// parseField parses one field's text into a bit mask of its values.
func parseField(text string, f field) (uint64, error) {
	if text == "" {
		return 0, fieldError(f.name, text, "empty")
	}
	var mask uint64
	for part := range strings.SplitSeq(text, ",") {
		bits, err := parsePart(part, f)
		if err != nil {
			return 0, fieldError(f.name, text, "%v", err)
		}
		mask |= bits
	}
	return mask, nil
}

// parsePart parses one list element: *, a, a-b, */n, a-b/n or a/n.
func parsePart(part string, f field) (uint64, error) {
	if part == "" {
		return 0, fmt.Errorf("empty list element")
	}
	rangeText, stepText, hasStep := strings.Cut(part, "/")
	var lo, hi int
	switch loText, hiText, isRange := strings.Cut(rangeText, "-"); {
	case rangeText == "*":
		lo, hi = f.min, f.max
	case isRange:
		var err error
		if lo, err = parseValue(loText, f); err != nil {
			return 0, err
		}
		if hi, err = parseValue(hiText, f); err != nil {
			return 0, err
		}
		if lo > hi {
			return 0, fmt.Errorf("range %q runs backwards", rangeText)
		}
	default:
		var err error
		if lo, err = parseValue(rangeText, f); err != nil {
			return 0, err
		}
		hi = lo
		if hasStep {
			hi = f.max // Vixie: a/n is a-max/n
		}
	}
	step := 1
	if hasStep {
		n, err := parseNumber(stepText)
		if err != nil || n < 1 || n > f.max-f.min+1 {
			return 0, fmt.Errorf("step %q is not a number in 1-%d", stepText, f.max-f.min+1)
		}
		step = n
	}
	var mask uint64
	for v := lo; v <= hi; v += step {
		mask |= 1 << v
	}
	return mask, nil
}

// parseValue parses a number in f's range or one of f's names.
func parseValue(text string, f field) (int, error) {
	if n, err := parseNumber(text); err == nil {
		if n < f.min || n > f.max {
			return 0, fmt.Errorf("%s is out of range %d-%d", text, f.min, f.max)
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
