package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The Postgres driver's start lateness, measured the way the cluster
// runs: storeNodes nodes (a pool of 12 connections each) share the
// partitions, each with a Listener on its own connection and an in-memory window (a timer per near-due task, armed from
// the partition's notices and from a window load every second), which
// claims each task at its due time and completes it; the lateness is how
// long after its due time the claim came back won, as River's is how long
// after ScheduledAt its worker started.

// storeNodes is the number of nodes of the Store's lateness runs.
const storeNodes = 3

// windowAhead is how far ahead a node's window holds tasks.
const windowAhead = 5 * time.Second

// benchLease is the lease of the benchmark's claims: none expires.
const benchLease = 30 * time.Second

// windowNode is one node of a Store lateness run.
type windowNode struct {
	pool  *pgxpool.Pool
	store *pgdriver.Store
	parts []int
	l     *latencies
	ctx   context.Context

	mu     sync.Mutex // guards armed and errs
	armed  map[string]bool
	errs   []error
	timers sync.WaitGroup

	// fired is how late each won claim was sent, rtt how long it took;
	// notDue counts the claims sent before the database's clock said due.
	fired, rtt *latencies
	notDue     atomic.Int64

	// batch: timers kick claimDueLoop (claimdue.go) instead of claiming
	// their one task.
	batch bool
	kick  chan struct{}
}

// arm sets a timer that claims task id at runAt, unless one is set.
func (n *windowNode) arm(id string, runAt time.Time) {
	if time.Until(runAt) > windowAhead {
		return // a later window load arms it
	}
	n.mu.Lock()
	if n.armed[id] {
		n.mu.Unlock()
		return
	}
	n.armed[id] = true
	n.mu.Unlock()
	n.timers.Add(1)
	time.AfterFunc(time.Until(runAt), func() {
		defer n.timers.Done()
		if n.batch {
			n.fire(id)
			return
		}
		n.claim(id)
	})
}

// claim claims id; if won it records the lateness and completes it. A
// task not yet due by the database's clock is armed again for its time.
func (n *windowNode) claim(id string) {
	if n.ctx.Err() != nil {
		return
	}
	tok := newToken()
	started := time.Now()
	c, err := n.store.Claim(n.ctx, id, tok, benchLease)
	if err == nil && c.Outcome == pgdriver.ClaimWon {
		n.l.add(time.Since(c.Task.Due))
		n.fired.add(started.Sub(c.Task.Due))
		n.rtt.add(time.Since(started))
		_, err = n.store.Complete(n.ctx, id, tok, pgdriver.Ending{})
	}
	n.mu.Lock()
	delete(n.armed, id)
	if err != nil && n.ctx.Err() == nil {
		n.errs = append(n.errs, err)
	}
	n.mu.Unlock()
	if err == nil && c.Outcome == pgdriver.ClaimNotDue {
		n.notDue.Add(1)
		n.arm(id, time.Now().Add(c.RunAt.Sub(c.DBNow)))
	}
}

// handle arms a timer for each task its partitions tell pending.
func (n *windowNode) handle(ev pgdriver.Event) {
	if ev.Kind == pgdriver.EventNotice && ev.Notice.State == string(pgdriver.Pending) {
		n.arm(ev.Notice.ID, ev.Notice.RunAt)
	}
}

// loadEvery loads the node's window every second until ctx ends.
func (n *windowNode) loadEvery(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		tasks, err := n.store.LoadWindow(ctx, n.parts, time.Now().Add(windowAhead), 10000)
		if err == nil {
			for _, t := range tasks {
				n.arm(t.ID, t.RunAt)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// newToken is a fresh owner token.
func newToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// storeLateness schedules rate tasks a second for duration on a fresh
// database, each due at once (ahead 0) or ahead in the future, while
// storeNodes window nodes run them, and returns how late each started.
func storeLateness(ctx context.Context, srv *pgserver.Server, rate int, duration, ahead time.Duration, batch bool) (*latencies, error) {
	pool, err := freshPool(ctx, srv, 40)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if _, err := pgdriver.Migrate(ctx, pool); err != nil {
		return nil, err
	}
	n := int(float64(rate) * duration.Seconds())
	l := &latencies{done: make(chan struct{}), want: n}
	fired, rtt := &latencies{want: -1}, &latencies{want: -1}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var nodes []*windowNode
	var loaders, completions sync.WaitGroup
	defer func() {
		stop()
		loaders.Wait()
		completions.Wait()
		for _, node := range nodes {
			node.timers.Wait()
		}
	}()
	for i := range storeNodes {
		cfg := pool.Config().Copy()
		cfg.MaxConns = 12
		nodePool, err := warmPool(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer nodePool.Close()
		st, err := pgdriver.New(nodePool, pgdriver.Options{Node: "node-" + strconv.Itoa(i)})
		if err != nil {
			return nil, err
		}
		node := &windowNode{pool: nodePool, store: st, l: l, ctx: runCtx, armed: make(map[string]bool), fired: fired, rtt: rtt,
			batch: batch, kick: make(chan struct{}, 1)}
		for p := i; p < st.Partitions(); p += storeNodes {
			node.parts = append(node.parts, p)
		}
		subscribed := make(chan struct{})
		var once sync.Once
		lis, err := st.Listen(node.parts, func(ev pgdriver.Event) {
			if ev.Kind == pgdriver.EventSubscribed {
				once.Do(func() { close(subscribed) })
			}
			node.handle(ev)
		})
		if err != nil {
			return nil, err
		}
		defer lis.Close()
		<-subscribed
		nodes = append(nodes, node)
		loaders.Add(2)
		go func() {
			defer loaders.Done()
			node.loadEvery(runCtx)
		}()
		go func() {
			defer loaders.Done()
			if batch {
				node.claimDueLoop(&completions)
			}
		}()
	}
	scheduler, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil {
		return nil, err
	}
	payload := []byte(`{"seq":0}`)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	waits := sampleWaits(sampleCtx, pool)
	defer stopSampling()
	if err := paced(ctx, rate, n, func(i int) error {
		_, err := scheduler.Schedule(ctx, pgdriver.Task{ID: "late-" + strconv.Itoa(i), Kind: "bench",
			Payload: payload, Due: time.Now().Add(ahead), MaxRetries: 25})
		return err
	}); err != nil {
		return nil, err
	}
	if err := l.wait(ahead); err != nil {
		return l, err
	}
	stopSampling()
	fmt.Printf("  the server's busy backends on average, by activity:%s\n", waits)
	var notDue int64
	for _, node := range nodes {
		notDue += node.notDue.Load()
		st := node.pool.Stat()
		fmt.Printf("  node pool: %d acquires, %d waited for a connection, %v waiting on average\n", st.AcquireCount(), st.EmptyAcquireCount(), (st.AcquireDuration() / time.Duration(max(1, st.AcquireCount()))).Round(time.Microsecond))
	}
	fmt.Printf("  the Store's won claims: sent late by %s; round trip %s; %d claims not due yet by the database's clock\n", fired, rtt, notDue)
	for _, node := range nodes {
		node.mu.Lock()
		errs := node.errs
		node.mu.Unlock()
		if len(errs) > 0 {
			return l, fmt.Errorf("riverbench: %d claims or completions failed, the first: %w", len(errs), errs[0])
		}
	}
	return l, nil
}
