package cron

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/go-stpe/scheduler"
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
// day-of-week), or six with [WithSeconds] (a seconds field first), a year
// field after them with [WithYear], the dialects of [Quartz] and [Spring],
// a descriptor (@yearly @annually @monthly @weekly @daily @midnight
// @hourly), or "@every <duration>"; optionally after a CRON_TZ=Zone or
// TZ=Zone prefix that overrides [In]. It is Spring's CronExpression.parse,
// Quartz's CronExpression constructor and robfig/cron's Parser.Parse.
//
// Each field is '*' or a comma-separated list of values, ranges (a-b) and
// steps (*/n, a-b/n, and a/n meaning a-max/n); months take JAN-DEC and
// weekdays SUN-SAT in any case. Day-of-month also takes ? (as *), L (the
// last day), L-n (n days before it), LW (the last weekday), L-nW and dW
// (the weekday nearest day d, within the month); day-of-week takes ?, dL
// (the month's last weekday d) and d#k (its k-th weekday d, k in 1-5). With
// [WithHashKey], every field but the year takes Jenkins's H forms. The
// package doc says how the day fields combine in each dialect.
//
// The error wraps scheduler.ErrInvalidArgument and names the bad field
// with the column of the bad element and the forms it accepts (or the
// zone, the field count, or the descriptor) for a syntax error, a value
// out of range, an unknown zone, a wrong number of fields, and a spec that
// can never run (such as "0 0 30 2 *"; "0 0 29 2 *" is fine, it runs in
// leap years).
func Parse(spec string, opts ...Option) (*Schedule, error) {
	cfg := config{loc: time.Local}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("cron: nil Option: %w", scheduler.ErrInvalidArgument)
		}
		opt.apply(&cfg)
	}
	if cfg.loc == nil {
		return nil, fmt.Errorf("cron: In(nil): a nil *time.Location: %w", scheduler.ErrInvalidArgument)
	}
	if cfg.hasHashKey && cfg.hashKey == "" {
		return nil, fmt.Errorf(`cron: WithHashKey(""): an empty key hashes every job alike; pass the job's name, as Jenkins does: %w`, scheduler.ErrInvalidArgument)
	}
	loc, restAt, err := zonePrefix(spec, cfg.loc)
	if err != nil {
		return nil, err
	}
	s := &Schedule{spec: spec, loc: loc}
	rest := strings.TrimSpace(spec[restAt:])
	if strings.HasPrefix(rest, "@") {
		if err := s.setDescriptor(spec, rest); err != nil {
			return nil, err
		}
		return s, nil
	}
	fields := splitColumns(spec, restAt)
	if err := checkFieldCount(spec, len(fields), cfg); err != nil {
		return nil, err
	}
	if !cfg.withSeconds {
		fields = append([]fieldText{{text: "0"}}, fields...)
	}
	p := &fieldParser{dialect: cfg.dialect, hashKey: cfg.hashKey, hasHashKey: cfg.hasHashKey}
	if err := s.setFields(p, fields); err != nil {
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

// zonePrefix reads a CRON_TZ=Zone or TZ=Zone prefix of spec and returns its
// zone and the offset in spec after it, or loc and the offset of the first
// non-space byte if there is no prefix.
func zonePrefix(spec string, loc *time.Location) (*time.Location, int, error) {
	start := len(spec) - len(strings.TrimLeftFunc(spec, unicode.IsSpace))
	for _, prefix := range []string{"CRON_TZ=", "TZ="} {
		after, ok := strings.CutPrefix(spec[start:], prefix)
		if !ok {
			continue
		}
		name := after
		if i := strings.IndexFunc(after, unicode.IsSpace); i >= 0 {
			name = after[:i]
		}
		if name == "" {
			return nil, 0, specError(spec, "%s with no zone name", prefix)
		}
		zone, err := time.LoadLocation(name)
		if err != nil {
			return nil, 0, fmt.Errorf("cron: time zone %q at column %d: %v (want an IANA zone name such as Europe/Berlin): %w",
				name, start+len(prefix)+1, err, scheduler.ErrInvalidArgument)
		}
		return zone, start + len(prefix) + len(name), nil
	}
	return loc, start, nil
}

// fieldText is one field of a spec and the column (1-based, in bytes of the
// whole spec) where it starts; a field the spec leaves out has column 0.
type fieldText struct {
	text string
	col  int
}

// splitColumns splits spec from offset from into its space-separated
// fields.
func splitColumns(spec string, from int) []fieldText {
	var fields []fieldText
	start := -1
	for i, r := range spec[from:] {
		if unicode.IsSpace(r) {
			if start >= 0 {
				fields = append(fields, fieldText{text: spec[from+start : from+i], col: from + start + 1})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		fields = append(fields, fieldText{text: spec[from+start:], col: from + start + 1})
	}
	return fields
}

// checkFieldCount rejects a spec with the wrong number of fields.
func checkFieldCount(spec string, n int, cfg config) error {
	names := "minute hour day-of-month month day-of-week"
	want := 5
	if cfg.withSeconds {
		names, want = "second "+names, 6
	}
	switch {
	case n == want:
		return nil
	case cfg.withYear && n == want+1:
		return nil
	case cfg.withYear:
		return specError(spec, "%d fields, want %d or %d (%s [year])", n, want, want+1, names)
	default:
		return specError(spec, "%d fields, want %d (%s)", n, want, names)
	}
}

// setDescriptor sets s from an @-descriptor or from "@every <duration>".
// A descriptor's fields are read in the Unix dialect whatever the options
// say, so @weekly is Sunday in every dialect.
func (s *Schedule) setDescriptor(spec, text string) error {
	if d, ok := strings.CutPrefix(strings.ToLower(text), "@every"); ok && (d == "" || unicode.IsSpace(rune(d[0]))) {
		return s.setEvery(spec, strings.TrimSpace(text[len("@every"):]))
	}
	std, ok := descriptors[strings.ToLower(text)]
	if !ok {
		return specError(spec, "unknown descriptor %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)", text)
	}
	fields := []fieldText{{text: "0"}}
	for _, f := range strings.Fields(std) {
		fields = append(fields, fieldText{text: f})
	}
	return s.setFields(&fieldParser{dialect: unixDialect}, fields)
}

// setEvery sets s to run every d from its first run: "@every 1h30m".
func (s *Schedule) setEvery(spec, text string) error {
	d, err := time.ParseDuration(text)
	if err != nil {
		return specError(spec, "@every %q is not a duration (want a Go duration such as 90s, 15m or 1h30m)", text)
	}
	if d < time.Second {
		return specError(spec, "@every %v is under one second, the resolution of a schedule (want 1s or more)", d)
	}
	s.every = d
	return nil
}

// setFields parses the field texts (seconds first, a year last if given)
// into s and checks that s can run.
func (s *Schedule) setFields(p *fieldParser, f []fieldText) error {
	var err error
	var v [6]fieldValues
	dow := dowField
	if p.dialect == quartzDialect {
		dow = quartzDowField
	}
	for i, fd := range []field{secondField, minuteField, hourField, domField, monthField, dow} {
		if v[i], err = p.parseField(f[i].text, f[i].col, fd); err != nil {
			return err
		}
	}
	if len(f) == 7 && f[6].text != "*" {
		year, err := p.parseField(f[6].text, f[6].col, yearField)
		if err != nil {
			return err
		}
		s.years, s.yearsRestricted = year.set, true
	}
	s.second, s.minute, s.hour = v[0].set[0], v[1].set[0], v[2].set[0]
	s.dom, s.month = uint32(v[3].set[0]), uint16(v[4].set[0])
	for n := range 8 {
		if v[5].set.has(n) {
			s.dow |= 1 << weekdayOf(n, p.dialect)
		}
	}
	s.domLast, s.domLastWeekday, s.domWeekday = v[3].last, v[3].lastWeekday, v[3].nearWeekday
	s.dowLast, s.dowNth = v[5].lastOf, v[5].nth
	s.special = v[3].special() || v[5].special()
	domStar, dowStar := dayFieldStar(f[3].text), dayFieldStar(f[5].text)
	if p.dialect == quartzDialect && (f[3].text == "?") == (f[5].text == "?") {
		return fieldError(dowField.name, f[5].text, f[5].col,
			"Quartz wants ? in exactly one of day-of-month %q and day-of-week %q", f[3].text, f[5].text)
	}
	s.daysMatchBoth = domStar || dowStar || p.dialect != unixDialect
	s.wildcard = timeFieldWildcard(f[1].text) || timeFieldWildcard(f[2].text)
	for first := range 7 {
		for d := 1; d <= 31; d++ {
			if s.dow&(1<<((first+d-1)%7)) != 0 {
				s.dowDays[first] |= 1 << d
			}
		}
	}
	return s.checkCanRun(f)
}

// dayFieldStar reports whether a day field begins with '*' or is '?': for
// Vixie's rule, such a field leaves the other day field to decide.
func dayFieldStar(text string) bool {
	return strings.HasPrefix(text, "*") || text == "?"
}

// timeFieldWildcard reports whether a minute or hour field makes a
// wildcard job: it begins with '*' (cronie's rule), or is Jenkins's H/n,
// which is */n shifted by the hash.
func timeFieldWildcard(text string) bool {
	return strings.HasPrefix(text, "*") || strings.HasPrefix(text, "H/") || strings.HasPrefix(text, "h/")
}

// checkCanRun rejects a spec whose days never exist: no allowed month of an
// allowed year has a day that matches the day fields. Without a year
// field, every month has each of its lengths with each weekday for its 1st
// within the Gregorian calendar's 400-year cycle, so those are tried; with
// one, every allowed year is.
func (s *Schedule) checkCanRun(f []fieldText) error {
	if s.runsSomeDay(false) {
		return nil
	}
	what := fmt.Sprintf("month field %q", f[4].text)
	if s.yearsRestricted {
		what += fmt.Sprintf(" and year field %q", f[6].text)
	}
	if !s.runsSomeDay(true) {
		return fieldError(domField.name, f[3].text, f[3].col, "no such day in %s, the schedule would never run", what)
	}
	return fieldError(dowField.name, f[5].text, f[5].col,
		"no day matches both it and day-of-month %q in %s, the schedule would never run", f[3].text, what)
}

// runsSomeDay reports whether some day of an allowed month and year
// matches the day fields, or with domOnly the day-of-month field alone.
func (s *Schedule) runsSomeDay(domOnly bool) bool {
	matches := func(days, firstWeekday int) bool {
		if domOnly {
			return s.domMask(days, firstWeekday)&daysBits(days) != 0
		}
		return s.dayMaskOf(days, firstWeekday) != 0
	}
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		if s.yearsRestricted {
			for y := minYearField; y <= maxYearField; y++ {
				if s.years.has(y-minYearField) && matches(daysIn(int64(y), m), weekdayOfDays(daysFromCivil(int64(y), m, 1))) {
					return true
				}
			}
			continue
		}
		for days := daysIn(1, m); days <= maxDaysIn(m); days++ {
			for w := range 7 {
				if matches(days, w) {
					return true
				}
			}
		}
	}
	return false
}
