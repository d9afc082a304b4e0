package cluster

// Producer-only use: any node schedules any kind, like asynq's Client,
// whether or not it handles the kind or is started; a kind no live node
// handles waits pending, counted by Node.Counts, until a node that handles
// it starts. WithStrictKinds turns an unknown kind back into an error.

// WithStrictKinds makes Node.Schedule refuse, with an error wrapping
// scheduler.ErrInvalidArgument, a kind this node has no handler for.
func WithStrictKinds() Option { return optionFunc(func(c *config) { c.strictKinds = true }) }
