package dashboard

import "fmt"

// Option configures New.
type Option func(*config) error

type config struct {
	readOnly   bool
	queueLimit int
	window     int // seconds of run history the charts show
}

// ReadOnly turns every action off: the pages show no buttons and the
// action endpoints answer 403 Forbidden.
func ReadOnly() Option {
	return func(c *config) error { c.readOnly = true; return nil }
}

// WithQueueLimit sets how many queued tasks the queue page shows at most
// (100 unless set; a ?limit= query may ask for fewer or up to this many).
func WithQueueLimit(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: queue limit %d: must be at least 1", ErrInvalidArgument, n)
		}
		c.queueLimit = n
		return nil
	}
}
