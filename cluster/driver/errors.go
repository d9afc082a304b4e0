package driver

import "errors"

// The sentinels every driver wraps; package cluster exports the same
// values under the same names, so callers test them with errors.Is
// whatever the store.

// ErrNotFound: no such task is stored.
var ErrNotFound = errors.New("cluster: no such task")

// ErrWrongState: the task is in a state that forbids the action.
var ErrWrongState = errors.New("cluster: task in a state that forbids the action")

// ErrIDConflict: the caller's ID already names a different task.
var ErrIDConflict = errors.New("cluster: task ID already used by a different task")

// ErrLayout: the keyspace is not laid out as this driver expects.
var ErrLayout = errors.New("cluster: keyspace layout mismatch")

// ErrUnknownKind: no task, node or pause of the kind is known.
var ErrUnknownKind = errors.New("cluster: unknown kind")

// ErrNotReplicated: fewer replicas than asked acknowledged a write in
// time (a driver made to wait for replicas, as the Redis driver's
// ReplicaAcks); the write is on the primary and may or may not survive a
// failover.
var ErrNotReplicated = errors.New("cluster: write not acknowledged by enough replicas")
