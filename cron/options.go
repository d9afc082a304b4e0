package cron

import "time"

// Option configures [Parse] and [MustParse]. Options are applied in order;
// a nil Option makes Parse fail with an error wrapping
// scheduler.ErrInvalidArgument.
type Option interface{ apply(*config) }

// optionFunc adapts a function to an [Option].
type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// dialect says how a spec's text is read where cron dialects differ.
type dialect int

const (
	// unixDialect is Vixie cron's and cronie's: Sunday is 0 (or 7), and
	// the day fields are joined by Vixie's rule.
	unixDialect dialect = iota
	// quartzDialect is Quartz's CronExpression: seconds first, an optional
	// year last, Sunday is 1 and Saturday 7, and exactly one day field is '?'.
	quartzDialect
	// springDialect is Spring's CronExpression: seconds first, Sunday 0 or
	// 7, and a day must match both day fields.
	springDialect
)

// config is what the options set.
type config struct {
	loc         *time.Location // zone the spec is read in; nil is an error
	withSeconds bool           // the spec has a leading seconds field
	withYear    bool           // the spec may have a trailing year field
	dialect     dialect        // how Sunday is numbered and the day fields join
	hashKey     string         // the key H hashes; valid when hasHashKey
	hasHashKey  bool           // WithHashKey was given: H is accepted
}

// In reads the spec in the zone loc (default time.Local): its wall times
// are loc's, and so are its daylight-saving changes. A CRON_TZ= or TZ=
// prefix in the spec overrides it. In(nil) makes Parse fail. It is
// Spring's CronTrigger(expression, zone), Quartz's
// CronExpression.setTimeZone and robfig/cron's WithLocation.
func In(loc *time.Location) Option {
	return optionFunc(func(c *config) { c.loc = loc })
}

// WithSeconds makes the spec start with a seconds field (0-59), six fields
// in all (seven with a year, see [WithYear]), as in Spring's and Quartz's
// expressions and robfig/cron's cron.WithSeconds. Descriptors such as
// @daily then run at second 0.
func WithSeconds() Option {
	return optionFunc(func(c *config) { c.withSeconds = true })
}

// WithYear lets the spec end with an optional year field: a year from 1970
// to 2199, or '*', with lists, ranges and steps as in the other fields
// ("2027", "2026-2030", "2026/2"). It is Quartz's optional seventh field
// and robfig/cron's fork netresearch/go-cron's year field. A spec whose
// years are all past never runs again: Next returns the zero Time.
func WithYear() Option {
	return optionFunc(func(c *config) { c.withYear = true })
}

// Quartz reads specs as Quartz's CronExpression does: a seconds field
// first, an optional year field last (as [WithSeconds] and [WithYear]),
// day-of-week 1-7 with 1 Sunday and 7 Saturday (so "6L" is the last Friday
// and "2#1" the first Monday), exactly one of the two day fields '?'
// (Quartz rejects a spec with neither or both, and so does Parse here), and
// a range whose end is before its start wraps around the field's end, as
// in Quartz: "22-2" in hours is 22, 23, 0, 1 and 2, "FRI-MON" Friday to
// Monday (the other dialects reject such a range).
func Quartz() Option {
	return optionFunc(func(c *config) {
		c.dialect, c.withSeconds, c.withYear = quartzDialect, true, true
	})
}

// Spring reads specs as Spring's CronExpression.parse does: six fields
// with seconds first (as [WithSeconds]), day-of-week 0-7 with 0 and 7
// Sunday, and a day must match both day fields: Spring's "0 0 0 13 * FRI"
// runs on Friday the 13th only, where Vixie cron's "0 0 13 * FRI" runs on
// every 13th and every Friday.
func Spring() Option {
	return optionFunc(func(c *config) {
		c.dialect, c.withSeconds = springDialect, true
	})
}

// WithHashKey accepts Jenkins's H in every field but the year, hashed from
// key: "H H * * *" runs once a day at a time picked by key, so a thousand
// jobs with different keys (Jenkins uses the job's name) spread over the
// day instead of all starting at midnight. The same key always gives the
// same times, in every version of this package. The forms are H (a value
// in the field's range, 1-28 for day-of-month so that every month has it),
// H(a-b) (a value in a-b), H/n (every n from an offset below n, such as
// minutes 7, 22, 37 and 52 for H/15) and H(a-b)/n; the package doc gives
// the hash. Without WithHashKey, a spec with H is rejected, and so is any
// spec with WithHashKey(""): an empty key would hash every job alike, the
// opposite of what H is for.
func WithHashKey(key string) Option {
	return optionFunc(func(c *config) { c.hashKey, c.hasHashKey = key, true })
}
