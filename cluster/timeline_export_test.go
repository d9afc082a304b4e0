package cluster

import "context"

// SampleTimeline samples the pending tasks of the partitions n reaps into
// the current minute of the timeline, as its loop does once a minute.
func (n *Node) SampleTimeline(ctx context.Context) error { return n.sampleTimeline(ctx) }
