package otelcluster

import (
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
)

// NewNode is the one call: it makes an Instrumentation from opts, a Node
// with cluster.New(rdb, nodeOpts...) and the instrumentation's Observer
// (given last, so it replaces any WithObserver in nodeOpts), and registers
// the node. Start and stop the node as usual, and shut the Instrumentation
// down with Shutdown after the node. It fails as New, cluster.New and
// Register do, leaving nothing running.
func NewNode(rdb redis.UniversalClient, nodeOpts []cluster.Option, opts ...Option) (*cluster.Node, *Instrumentation, error) {
	inst, err := New(opts...)
	if err != nil {
		return nil, nil, err
	}
	all := append(append([]cluster.Option(nil), nodeOpts...), cluster.WithObserver(inst.Observer()))
	n, err := cluster.New(rdb, all...)
	if err != nil {
		return nil, nil, errors.Join(err, inst.Shutdown())
	}
	if err := inst.Register(n); err != nil {
		n.StopNow()
		return nil, nil, errors.Join(err, inst.Shutdown())
	}
	return n, inst, nil
}
