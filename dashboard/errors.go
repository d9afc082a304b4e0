package dashboard

import "errors"

// ErrInvalidArgument is wrapped by the error New returns for a nil
// Scheduler or a bad option.
var ErrInvalidArgument = errors.New("dashboard: invalid argument")
