package pgdriver

import (
	"context"
	"slices"
)

// The Operations group of driver.Driver (cluster/driver/operations.go),
// its pausing of kinds and its ping; the reads of tasks, the actions, the
// bulk actions and the reads of kinds and of the timeline are in the
// driver_operations_*.go files.

// Pause pauses kind for every partition at once (one row of
// stpe_paused_kinds): its pending tasks keep their times, and no claim or
// window load takes them until Resume. Pausing a paused kind does
// nothing. asynq's PauseQueue, River's QueuePause.
func (d *Driver) Pause(ctx context.Context, kind string) error { return d.st.Pause(ctx, kind) }

// Resume lets the pending tasks of kind be claimed again and tells every
// partition's channel ("resumed <kind>"), so the nodes load them again.
func (d *Driver) Resume(ctx context.Context, kind string) error { return d.st.Resume(ctx, kind) }

// PausedKinds returns the paused kinds, sorted.
func (d *Driver) PausedKinds(ctx context.Context) ([]string, error) {
	kinds, err := d.st.pausedKinds(ctx)
	if err != nil {
		return nil, failed("paused kinds", err)
	}
	slices.Sort(kinds)
	return kinds, nil
}

// Ping checks that the database answers.
func (d *Driver) Ping(ctx context.Context) error { return d.ping(ctx) }
