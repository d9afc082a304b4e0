package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cron"
)

// demoCluster is a cluster node on a redis-server of its own, running a
// few kinds of tasks, and a producer that keeps scheduling more.
type demoCluster struct {
	redis  *redisServer
	rdb    *redis.Client
	node   *cluster.Node
	cancel context.CancelFunc
	wg     sync.WaitGroup // the producer
}

// startCluster starts the redis-server, the node with its kinds and
// periodic task, a first batch of tasks and the producer. It returns
// errNoRedis without redis-server on PATH.
func startCluster(ctx context.Context) (*demoCluster, error) {
	srv, err := startRedis()
	if err != nil {
		return nil, err
	}
	c := &demoCluster{redis: srv, rdb: redis.NewClient(&redis.Options{Addr: srv.addr, PoolSize: 16})}
	// The failures are the demo's point, not news for its log.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c.node, err = cluster.New(c.rdb, cluster.WithMaxRetries(2), cluster.WithLogger(quiet),
		cluster.WithBackoff(func(int) time.Duration { return 3 * time.Second }),
		cluster.WithKeepDone(time.Hour, 1000)) // the done tab lists the last thousand
	if err == nil {
		err = c.register()
	}
	if err == nil {
		err = c.node.Start(ctx)
	}
	if err == nil {
		err = c.seed(ctx)
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	pctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	c.wg.Add(1)
	go c.produce(pctx)
	return c, nil
}

// charge is the payload of the "charge" kind.
type charge struct {
	Customer string `json:"customer"`
	Cents    int    `json:"cents"`
}

// register declares the node's kinds: emails that succeed, charges that
// are declined one time in three, image resizes that panic one time in
// four, and a periodic refresh every ten seconds.
func (c *demoCluster) register() error {
	work := func(ctx context.Context, d time.Duration) {
		select {
		case <-time.After(time.Duration(rand.Int64N(int64(d)))):
		case <-ctx.Done():
		}
	}
	every10s, err := cron.Parse("@every 10s")
	if err != nil {
		return err
	}
	return errors.Join(
		c.node.Handle("email", func(ctx context.Context, _ cluster.Task) error { work(ctx, 300*time.Millisecond); return nil }),
		cluster.HandleJSON(c.node, "charge", func(ctx context.Context, ch charge) error {
			work(ctx, 200*time.Millisecond)
			if rand.IntN(3) == 0 {
				return fmt.Errorf("card of %s declined for %d cents", ch.Customer, ch.Cents)
			}
			return nil
		}),
		c.node.Handle("resize", func(ctx context.Context, t cluster.Task) error {
			work(ctx, 500*time.Millisecond)
			if rand.IntN(4) == 0 {
				panic(fmt.Sprintf("decoder: %d bytes of %x is no image", len(t.Payload), t.Payload[:min(4, len(t.Payload))]))
			}
			return nil
		}),
		c.node.Periodic("refresh-rates", every10s, func(ctx context.Context, _ cluster.Task) error { work(ctx, time.Second); return nil }),
	)
}

// seed stores a first batch: two hundred emails over the next hours, so
// the listing has pages, and a few charges and resizes due now.
func (c *demoCluster) seed(ctx context.Context) error {
	now := time.Now()
	for i := range 200 {
		if _, err := c.node.Schedule(ctx, "email", fmt.Appendf(nil, "to: user%d@example.com\nsubject: your weekly digest", i), now.Add(time.Duration(i+1)*time.Minute)); err != nil {
			return err
		}
	}
	for range 10 {
		if err := c.scheduleOne(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

// produce schedules a charge or a resize every second until ctx ends.
func (c *demoCluster) produce(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			_ = c.scheduleOne(ctx, now.Add(time.Duration(rand.IntN(5))*time.Second))
		}
	}
}

func (c *demoCluster) scheduleOne(ctx context.Context, due time.Time) error {
	if rand.IntN(2) == 0 {
		_, err := cluster.ScheduleJSON(ctx, c.node, "charge", charge{Customer: fmt.Sprintf("cus_%04d", rand.IntN(10000)), Cents: 100 + rand.IntN(9900)}, due)
		return err
	}
	img := make([]byte, 64+rand.IntN(8192))
	for i := range img {
		img[i] = byte(rand.IntN(256))
	}
	_, err := c.node.Schedule(ctx, "resize", img, due) // binary: the task page shows it as hex
	return err
}

// stop stops the producer, the node, the client and the redis-server.
func (c *demoCluster) stop() {
	if c.cancel != nil {
		c.cancel()
		c.wg.Wait()
	}
	if c.node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.node.Stop(ctx)
		cancel()
	}
	_ = c.rdb.Close()
	c.redis.stop()
}
