package pgdriver

import (
	"errors"
	"fmt"

	"github.com/go-stpe/scheduler"
)

// ErrNotFound is wrapped by the error of an operation on an ID that names
// no stored task (the cluster package's ErrNotFound, River's
// rivertype.ErrNotFound).
var ErrNotFound = errors.New("cluster: no such task")

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
