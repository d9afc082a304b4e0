package cron

import (
	"fmt"

	"github.com/go-stpe/scheduler"
)

// fieldError returns the error for a bad field: it names the field, quotes
// its text, says what is wrong, and wraps scheduler.ErrInvalidArgument.
func fieldError(field, text, format string, args ...any) error {
	return fmt.Errorf("cron: %s field %q: %s: %w", field, text, fmt.Sprintf(format, args...), scheduler.ErrInvalidArgument)
}

// specError returns the error for a spec that is wrong as a whole (field
// count, zone prefix, descriptor); it wraps scheduler.ErrInvalidArgument.
func specError(spec, format string, args ...any) error {
	return fmt.Errorf("cron: spec %q: %s: %w", spec, fmt.Sprintf(format, args...), scheduler.ErrInvalidArgument)
}
