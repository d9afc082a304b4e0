package pgdriver

import (
	"fmt"

	"github.com/go-stpe/scheduler"
)

// invalidError is bad input: "cluster: what: why", wrapping
// scheduler.ErrInvalidArgument.
type invalidError struct{ what, why string }

func (e *invalidError) Error() string { return "cluster: " + e.what + ": " + e.why }

func (e *invalidError) Unwrap() error { return scheduler.ErrInvalidArgument }

// invalid returns an invalidError whose why is format with args.
func invalid(what, format string, args ...any) error {
	return &invalidError{what: what, why: fmt.Sprintf(format, args...)}
}

// failed returns "cluster: what: err", wrapping err, for a failed call to
// the database.
func failed(what string, err error) error {
	return fmt.Errorf("cluster: %s: postgres: %w", what, err)
}
