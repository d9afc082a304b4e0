package reports

import "time"

// JobStatus is what the service knows about one job, for a status page or
// a test.
type JobStatus struct {
	// Job is the job.
	Job Job
	// Runs counts the job's runs since New, Failures those that returned
	// an error.
	Runs, Failures uint64
	// Last is the job's latest run; the zero Run before the first.
	Last Run
	// LastErr is the latest run's error, or nil.
	LastErr error
	// NextIn is the time left until the job's next run by the scheduler's
	// clock (scheduler.ScheduledFuture.Delay), or 0 while the service is
	// stopped.
	NextIn time.Duration
}

// Status returns the status of each job, in the order of [Service.Jobs].
func (s *Service) Status() []JobStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]JobStatus(nil), s.status...)
	for i, f := range s.futures {
		out[i].NextIn = f.Delay()
	}
	return out
}

// record notes that job i ran as r with outcome err.
func (s *Service) record(i int, r Run, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.status[i]
	st.Runs++
	if err != nil {
		st.Failures++
	}
	st.Last, st.LastErr = r, err
}
