package scheduler

import "time"

// Trigger computes the run times of a calendar task (Spring's
// org.springframework.scheduling.Trigger; the JDK has none). Next returns the
// first run time strictly after t, or the zero Time when there are no more
// runs. It has the shape of robfig/cron's Schedule interface, so a parsed
// robfig/cron or gocron spec is a Trigger as it is, and so is a
// *cron.Schedule of this module's cron package.
//
// Next is called by the worker that ran the task, never concurrently for one
// task; a Trigger shared by several tasks must be safe for concurrent use.
type Trigger interface {
	Next(t time.Time) time.Time
}

// TriggerFunc adapts a function to a [Trigger].
type TriggerFunc func(t time.Time) time.Time

// Next implements [Trigger]: it returns f(t).
func (f TriggerFunc) Next(t time.Time) time.Time { return f(t) }
