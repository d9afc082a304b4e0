package redisdriver

import (
	"context"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Subscribe subscribes to the membership channel (a plain subscription:
// every node hears it) and returns once Redis confirmed it; Follow adds
// the partitions' channels. Each subscription has its listening loop,
// which calls on with every message it reads; go-redis subscribes again
// after a lost connection, and each confirmed (re)subscription is a
// driver.NoticeSubscribed (driver.Coordination).
func (d *Driver) Subscribe(ctx context.Context, on func(driver.Notice)) (driver.Subscription, error) {
	ps := d.plain.Subscribe(ctx, d.keys.MembershipChannel())
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, err
	}
	loops, cancel := context.WithCancel(context.Background())
	s := &subscription{d: d, on: on, loops: loops, cancel: cancel, shards: make(map[string]shardSub)}
	s.listen(loops, ps)
	return s, nil
}

// AnnounceMembership publishes "changed" on the membership channel
// (driver.Coordination).
func (d *Driver) AnnounceMembership(ctx context.Context) error {
	return d.rdb.Publish(ctx, d.keys.MembershipChannel(), "changed").Err()
}

// AnnounceEnded publishes "ended @name" on the channel of the partition of
// periodic task name (driver.Coordination).
func (d *Driver) AnnounceEnded(ctx context.Context, name string) error {
	ch := d.parts[driver.PeriodicPartition(name, len(d.parts))].Channel()
	return d.rdb.SPublish(ctx, ch, "ended "+periodicKind(name)).Err()
}

// subscription is a node's subscriptions: the membership channel's, and
// the sharded ones of the partitions' channels it follows.
type subscription struct {
	d      *Driver
	on     func(driver.Notice)
	loops  context.Context    // the listening loops' ctx
	cancel context.CancelFunc // ends loops
	wg     sync.WaitGroup     // the listening loops

	// mu guards shards, shared and closed, and orders the changes of the
	// subscriptions; it is held across the (un)subscribe calls.
	mu     sync.Mutex
	shards map[string]shardSub // the sharded subscription of each partition's channel followed
	shared *redis.PubSub       // the one sharded subscription of every channel, on a client that is not a cluster's
	closed bool
}

// shardSub is the sharded subscription that carries one partition's
// channel, and what ends its listening loop (nothing for a subscription
// shared by every channel).
type shardSub struct {
	ps   *redis.PubSub
	stop context.CancelFunc
}

// Follow makes the sharded subscriptions cover exactly the channels of
// parts. A partition's channel is sharded (SSUBSCRIBE, SPUBLISH in the
// scripts): its messages stay on the shard that holds the partition, where
// a plain PUBLISH would be forwarded to every server of a Redis Cluster. On
// a Redis Cluster a sharded subscription is to the master of its channel's
// slot, so each channel has a subscription (a connection) of its own,
// which follows a failover of that slot when it reconnects; on one server,
// one subscription carries them all.
func (s *subscription) Follow(ctx context.Context, parts []int) error {
	want := make(map[string]bool, len(parts))
	for _, i := range parts {
		want[s.d.parts[i].Channel()] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	var add, drop []string
	for c := range want {
		if _, ok := s.shards[c]; !ok {
			add = append(add, c)
		}
	}
	for c := range s.shards {
		if !want[c] {
			drop = append(drop, c)
		}
	}
	if cc, ok := s.d.plain.(*redis.ClusterClient); ok {
		for _, c := range drop {
			s.shards[c].stop()
			delete(s.shards, c)
			s.d.listening.follow(c, -1)
		}
		for _, c := range add {
			ps := cc.SSubscribe(ctx, c)
			lctx, stop := context.WithCancel(s.loops)
			s.listen(lctx, ps)
			s.shards[c] = shardSub{ps: ps, stop: stop}
			s.d.listening.follow(c, 1)
		}
		return nil
	}
	if s.shared == nil {
		s.shared = s.d.plain.SSubscribe(ctx)
		s.listen(s.loops, s.shared)
	}
	if len(drop) > 0 {
		if err := s.shared.SUnsubscribe(ctx, drop...); err != nil {
			return err
		}
		for _, c := range drop {
			delete(s.shards, c)
			s.d.listening.follow(c, -1)
		}
	}
	if len(add) > 0 {
		if err := s.shared.SSubscribe(ctx, add...); err != nil {
			return err
		}
		for _, c := range add {
			s.shards[c] = shardSub{ps: s.shared, stop: func() {}}
			s.d.listening.follow(c, 1)
		}
	}
	return nil
}

// Close ends every subscription and waits for the listening loops.
func (s *subscription) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.shards {
		s.d.listening.follow(c, -1)
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// listen starts the listening loop of ps, until ctx ends.
func (s *subscription) listen(ctx context.Context, ps *redis.PubSub) {
	s.wg.Add(1)
	go s.listenLoop(ctx, ps)
}

// listenLoop reads ps and tells on of each message; a failed read is a
// driver.NoticeInterrupted, and is tried again after a pause.
func (s *subscription) listenLoop(ctx context.Context, ps *redis.PubSub) {
	defer s.wg.Done()
	// Receive does not return when ctx ends; closing the subscription
	// makes it.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	defer ps.Close()
	membership := s.d.keys.MembershipChannel()
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.on(driver.Notice{Kind: driver.NoticeInterrupted, Err: err})
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			s.on(driver.Notice{Kind: driver.NoticeSubscribed})
		case *redis.Message:
			if m.Channel == membership {
				s.on(driver.Notice{Kind: driver.NoticeMembership})
				continue
			}
			if n, ok := parseNotice(m.Payload); ok {
				s.on(n)
			}
		}
	}
}
