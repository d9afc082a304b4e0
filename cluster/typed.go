package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Typed tasks: a Go value as the payload, encoded as JSON by ScheduleJSON
// and decoded for a typed handler by HandleJSON. River's counterpart is
// JobArgs and Worker[T]; asynq leaves the encoding to the caller.

// ErrSkipRetry, wrapped by a handler's error, makes the task dead at once
// instead of retrying it: the run can never succeed. asynq's counterpart is
// SkipRetry; River's is JobCancel.
var ErrSkipRetry = errors.New("cluster: run can never succeed, not retried")

// ScheduleJSON stores a task of kind whose payload is v encoded as JSON,
// as Node.Schedule does. A v that does not encode is an error wrapping
// scheduler.ErrInvalidArgument, and nothing is stored.
func ScheduleJSON[T any](ctx context.Context, n *Node, kind string, v T, due time.Time, opts ...ScheduleOption) (string, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return "", invalid("schedule "+kind, "payload does not encode as JSON: %v", err)
	}
	return n.Schedule(ctx, kind, payload, due, opts...)
}

// HandleJSON registers h for kind, as Node.Handle does, with each task's
// payload decoded from JSON into a T. A payload that does not decode (or
// holds fields T lacks) fails the run with an error wrapping ErrSkipRetry,
// so the task goes to the dead set at once with that error, unretried.
func HandleJSON[T any](n *Node, kind string, h func(context.Context, T) error, opts ...HandleOption) error {
	if h == nil {
		return invalid("handle "+kind, "nil handler")
	}
	return n.Handle(kind, func(ctx context.Context, t Task) error {
		var v T
		if err := decodeStrict(t.Payload, &v); err != nil {
			return fmt.Errorf("cluster: decode the payload of %s as %T: %w (%w)", t.ID, v, err, ErrSkipRetry)
		}
		return h(ctx, v)
	}, opts...)
}

// decodeStrict decodes JSON into v, refusing unknown fields and trailing
// data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
