package cron

import "time"

// maxUnix is the last second of year 9999 in UTC: Next finds no run after
// it.
const maxUnix = 253402300799

// nextEvery is Next for "@every d": t plus d, in the spec's zone, or the
// zero Time past year 9999. It is fixed-rate: the scheduler asks for the
// run after the previous run's due time, so runs are the first due time
// plus whole multiples of d however late each run starts (robfig/cron
// instead adds d to the time its runner woke up, rounded to whole seconds).
// d is a duration on the absolute time line, so daylight-saving changes do
// not move the runs: @every 1h runs every 60 minutes through both changes.
func (s *Schedule) nextEvery(t time.Time) time.Time {
	next := t.Add(s.every)
	if !next.After(t) || next.Unix() > maxUnix {
		return time.Time{}
	}
	return next.In(s.loc)
}
