package cron

import "time"

// Option configures [Parse] and [MustParse].
type Option func(*config)

// config is what the options set.
type config struct {
	loc         *time.Location // zone the spec is read in; nil is an error
	withSeconds bool           // the spec has a leading seconds field
}

// In reads the spec in the zone loc (default time.Local): its wall times
// are loc's, and so are its daylight-saving changes. A CRON_TZ= or TZ=
// prefix in the spec overrides it. In(nil) makes Parse fail. It is
// Spring's CronTrigger(expression, zone) and robfig/cron's WithLocation.
func In(loc *time.Location) Option {
	return func(c *config) { c.loc = loc }
}

// WithSeconds makes the spec start with a seconds field (0-59), six fields
// in all, as in Spring's and Quartz's expressions (without their year
// field) and robfig/cron's cron.WithSeconds. Descriptors such as @daily
// then run at second 0.
func WithSeconds() Option {
	return func(c *config) { c.withSeconds = true }
}
