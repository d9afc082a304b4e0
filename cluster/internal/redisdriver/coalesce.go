package redisdriver

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Claims and completions made at the same time share a round trip: a
// node's workers claim the tasks that fall due together at once (a drain
// of a backlog claims as many at a time as the node has workers), and
// each call alone would be a write and a read on a connection of its own,
// for the client and for Redis. A call made while none is under way goes
// out at once, alone; the calls made while one is under way wait for it
// and then go out together in one pipeline, and so on: the group commit
// of a database's log. A lone call waits for nothing, so a quiet node's
// claim is as fast as before; a busy node's calls cost one write and one
// read per batch. Each call is still its own script, atomic on its own.
//
// The calls are batched by the server that runs them: on a Redis Cluster,
// by the master of their partition's slot, so that no call waits for a
// call to another master; a call slow to answer is then a server slow for
// every call of the batch anyway.

// batchers are a driver's coalescers: one for one server (or a Sentinel's
// master), one per master of a Redis Cluster.
type batchers struct {
	cluster *redis.ClusterClient // nil: one server

	one coalescer // one server's calls

	// mu guards byMaster.
	mu       sync.Mutex
	byMaster map[string]*coalescer // by the master's address
}

// run runs sc with keys and args as the coalescer of the server that holds
// keys[0] does; alone if the cluster's map does not say which master that
// is.
func (b *batchers) run(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	if b.cluster == nil {
		return b.one.run(ctx, rdb, sc, keys, args...)
	}
	master, err := b.cluster.MasterForKey(ctx, keys[0])
	if err != nil {
		return sc.Run(ctx, rdb, keys, args...)
	}
	addr := master.Options().Addr
	b.mu.Lock()
	c := b.byMaster[addr]
	if c == nil {
		if b.byMaster == nil {
			b.byMaster = make(map[string]*coalescer)
		}
		c = &coalescer{}
		b.byMaster[addr] = c
	}
	b.mu.Unlock()
	return c.run(ctx, rdb, sc, keys, args...)
}

// coalescer sends the script calls to one server made meanwhile in one
// pipeline.
type coalescer struct {
	// mu guards queue and busy.
	mu    sync.Mutex
	queue []*queuedCall // the calls made while busy, in order
	busy  bool          // a send is under way; the queue goes out after it
}

// queuedCall is a call waiting for its batch: its script, keys and
// arguments, and once sent its reply.
type queuedCall struct {
	ctx  context.Context
	sc   *redis.Script
	call scriptCall
	cmd  *redis.Cmd
	done chan struct{} // closed once cmd holds the reply
}

// run runs sc with keys and args, alone if no call is under way, else in
// the next batch, and returns its reply; a call whose ctx ends while it
// waits in the queue is not sent, and answers ctx's error.
func (c *coalescer) run(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	c.mu.Lock()
	if c.busy {
		q := &queuedCall{ctx: ctx, sc: sc, call: scriptCall{keys: keys, args: args}, done: make(chan struct{})}
		c.queue = append(c.queue, q)
		c.mu.Unlock()
		select {
		case <-q.done:
			return q.cmd
		case <-ctx.Done():
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(ctx.Err())
			return cmd
		}
	}
	c.busy = true
	c.mu.Unlock()
	cmd := sc.Run(ctx, rdb, keys, args...)
	c.sendQueued(rdb)
	return cmd
}

// sendQueued sends the calls queued during the last send, from a
// goroutine of its own, batch after batch until none is left.
func (c *coalescer) sendQueued(rdb redis.UniversalClient) {
	c.mu.Lock()
	if len(c.queue) == 0 {
		c.busy = false
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	go func() {
		for {
			c.mu.Lock()
			batch := c.queue
			c.queue = nil
			if len(batch) == 0 {
				c.busy = false
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			sendBatch(rdb, batch)
		}
	}()
}

// sendBatch sends the calls of batch whose callers still wait, under a
// ctx that ends when every one of them has stopped waiting.
func sendBatch(rdb redis.UniversalClient, batch []*queuedCall) {
	live := batch[:0:0]
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			q.cmd = redis.NewCmd(q.ctx)
			q.cmd.SetErr(err)
			close(q.done)
			continue
		}
		live = append(live, q)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(live[0].ctx))
	defer cancel()
	waiting := int32(len(live))
	for _, q := range live {
		stop := context.AfterFunc(q.ctx, func() {
			if atomic.AddInt32(&waiting, -1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	sendCalls(ctx, rdb, live)
}

// sendCalls runs each call's script by its SHA-1 in one pipeline, then
// again, after loading the scripts, the calls that found theirs missing
// (as evalEach does), and closes each call's done.
func sendCalls(ctx context.Context, rdb redis.UniversalClient, calls []*queuedCall) {
	todo := calls
	for round := 0; len(todo) > 0; round++ {
		if round > 0 && !loadScripts(ctx, rdb, todo) {
			break
		}
		pipe := rdb.Pipeline()
		for _, q := range todo {
			q.cmd = pipe.EvalSha(ctx, q.sc.Hash(), q.call.keys, q.call.args...)
		}
		_, _ = pipe.Exec(ctx) // each command holds its own error
		var missing []*queuedCall
		for _, q := range todo {
			if err := q.cmd.Err(); round == 0 && err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
				missing = append(missing, q)
			}
		}
		todo = missing
	}
	for _, q := range calls {
		close(q.done)
	}
}

// loadScripts loads the scripts of calls; on an error it gives each call
// that error and returns false.
func loadScripts(ctx context.Context, rdb redis.UniversalClient, calls []*queuedCall) bool {
	loaded := map[*redis.Script]bool{}
	for _, q := range calls {
		if loaded[q.sc] {
			continue
		}
		if err := q.sc.Load(ctx, rdb).Err(); err != nil {
			for _, q := range calls {
				q.cmd.SetErr(err)
			}
			return false
		}
		loaded[q.sc] = true
	}
	return true
}
