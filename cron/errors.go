package cron

import (
	"fmt"

	"github.com/go-stpe/scheduler"
)

// fieldError returns the error for a bad field: it names the field, quotes
// its text, gives the column (1-based, in the whole spec) of the element
// that is wrong, says what is wrong and what is accepted, and wraps
// scheduler.ErrInvalidArgument.
func fieldError(field, text string, col int, format string, args ...any) error {
	return fmt.Errorf("cron: %s field %q at column %d: %s: %w", field, text, col, fmt.Sprintf(format, args...), scheduler.ErrInvalidArgument)
}

// specError returns the error for a spec that is wrong as a whole (field
// count, zone prefix, descriptor); it wraps scheduler.ErrInvalidArgument.
func specError(spec, format string, args ...any) error {
	return fmt.Errorf("cron: spec %q: %s: %w", spec, fmt.Sprintf(format, args...), scheduler.ErrInvalidArgument)
}

// elementError is what a field's parser reports about one list element:
// the column where the element starts and what is wrong with it. parseField
// turns it into a fieldError.
type elementError struct {
	col int
	msg string
}

func (e *elementError) Error() string { return e.msg }

// errAt returns an elementError for the element starting at col.
func errAt(col int, format string, args ...any) *elementError {
	return &elementError{col: col, msg: fmt.Sprintf(format, args...)}
}
