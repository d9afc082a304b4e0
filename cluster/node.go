package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/go-stpe/scheduler"
	"github.com/redis/go-redis/v9"
)

// Node is one replica: it stores tasks in Redis (Schedule, Cancel), and,
// once started, runs the tasks of the kinds it handles when they fall due,
// sharing them with every other node on the same Redis and key prefix.
// A Node comes only from New, or from NewWithDriver on another store
// (PostgreSQL); the zero value is not usable. Its methods are
// safe for concurrent use. A Node runs once: Start, then Stop or StopNow.
//
// It plays the part of asynq's Client and Server together, of River's
// Client, and of a clustered Quartz Scheduler.
type Node struct {
	cfg   config
	drv   driver.Driver         // the store, behind the seam every store implements
	rdb   redis.UniversalClient // the client New was given (the driver's may wrap it for the observer); nil from NewWithDriver
	name  string                // this replica's random name, the stem of its claim tokens
	seq   atomic.Uint64         // numbers the claim tokens
	sched *scheduler.Scheduler

	// mu guards state, handlers, periodics, loaded (and each entry's
	// ready and index), running (and each run's expires), claiming,
	// canceledClaims, more, shares, liveKinds, liveKindsKnown, offset,
	// offsetEst, renewed, started, ready, busy, kindBusy, credit, weighted,
	// pickable and warned. It is never held across a call into sched,
	// Redis or a handler.
	mu             sync.Mutex
	state          nodeState
	handlers       map[string]kindHandler
	periodics      []*periodic
	loaded         map[string]*entry      // tasks in the window waiting in sched, by ID
	running        map[string]*run        // tasks this node holds a claim on, by ID
	claiming       map[string]bool        // tasks taken from the window whose claim has not yet ended or started a run
	canceledClaims map[string]bool        // of claiming, those whose cancel this node heard meanwhile (run.go)
	more           bool                   // the last sweep stopped at the load limit
	shares         shares                 // this node's part of the partitions (ownership.go)
	liveKinds      map[string]bool        // the kinds the live claimers handle, as last read
	liveKindsKnown bool                   // every live claimer had a record with its kinds
	offset         time.Duration          // Redis's clock minus the node's, as estimated (offset.go)
	offsetEst      offsetEstimate         // the readings offset comes from
	renewed        time.Time              // when the membership was last renewed (Health)
	started        time.Time              // when Start was called (the record's Started)
	ready          map[string]*readyQueue // due entries waiting for a worker, by kind
	busy           int                    // workers claiming or running a task
	kindBusy       map[string]int         // of busy, by kind
	credit         map[string]int         // the weighted round robin's running credit, by kind
	weighted       bool                   // some kind has a priority weight (WithKindPriority)
	pickable       []string               // scratch space of pickLocked
	warned         map[string]time.Time   // when each kind no live node handles was last logged

	runCtx      context.Context // parent of every run's ctx; canceled by Stop past its deadline and StopNow
	runCancel   context.CancelCauseFunc
	bgCancel    context.CancelFunc // ends the loops of bg
	bg          sync.WaitGroup     // the sweep, membership, standby, reaper, trim and timeline loops
	hbCancel    context.CancelFunc // ends the heartbeat loop
	hb          sync.WaitGroup     // the heartbeat loop
	kick        chan struct{}      // asks the sweep loop for a sweep now
	renewKick   chan struct{}      // asks the membership loop to renew now
	standbyKick chan struct{}      // asks the standby loop to look now
	trimKick    chan struct{}      // asks the trim loop to trim the done records now

	// subMu guards sub, and orders the changes of the subscription; it
	// is held across its Follow calls, never with mu.
	subMu     sync.Mutex
	sub       driver.Subscription // the notices heard, from Start until Stop (nil otherwise; pubsub.go)
	regCancel context.CancelFunc  // ends the record's renewal while stopping
	reg       sync.WaitGroup      // the record's renewal while stopping
	calls     sync.WaitGroup      // Redis calls on the lease path still running (bounded)
	outcomes  sync.WaitGroup      // runs whose outcome is being written (recordRun)

	hooks *testHooks // the tests' view of a run's steps (run.go); nil but in tests, set before Start
}

// kindHandler is the handler of one kind and its settings.
type kindHandler struct {
	fn      Handler
	timeout time.Duration // 0: the node's WithTaskTimeout
	limit   int           // most runs at once on this node; 0: no limit
	weight  int           // priority weight (WithKindPriority); 0: none given
}

type nodeState int

const (
	stateNew nodeState = iota
	stateStarted
	stateStopping
	stateStopped
)

// entry is a task of the window, waiting in the node's scheduler. Its
// identity (the pointer) tells a current entry from a replaced one.
type entry struct {
	id, kind string
	due      int64                     // µs; the claim expects the task due no later than this
	fut      scheduler.ScheduledFuture // set once scheduled; guarded by Node.mu
	// ready is set while the entry is due and waits in its kind's
	// ready queue for a free worker or for its kind's limit, at index;
	// both guarded by Node.mu.
	ready bool
	index int
	// backup marks an overdue task of a partition this node backs up
	// (standby.go): it waits behind the node's own, in reverse order.
	backup bool
}

// New returns a Node that keeps its tasks in rdb (a *redis.Client, a
// *redis.ClusterClient or any redis.UniversalClient). It starts nothing: a
// node that only schedules need not be started. nil rdb, a nil option or
// a bad option is an error wrapping scheduler.ErrInvalidArgument.
// NewWithDriver makes a node on another store.
func New(rdb redis.UniversalClient, opts ...Option) (*Node, error) {
	if rdb == nil {
		return nil, invalid("New", "nil Redis client")
	}
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := validateReplicaAcks(&cfg, rdb); err != nil {
		return nil, err
	}
	drv := redisdriver.New(rdb, redisdriver.Options{Prefix: cfg.prefix, Partitions: cfg.partitions,
		Observe: observeRedis(cfg.observer.RedisCall), ReplicaAcks: cfg.replicaAcks, ReplicaTimeout: cfg.replicaTimeout})
	n, err := newNode(cfg, drv)
	if err != nil {
		return nil, err
	}
	n.rdb = rdb
	if pool := poolSize(rdb); pool > 0 && pool < cfg.concurrency+4 {
		cfg.logger.Warn("cluster: New: the Redis client's pool is smaller than the concurrency plus 4; renewals may queue behind claims and leases expire",
			"pool", pool, "concurrency", cfg.concurrency)
	}
	return n, nil
}

// configure applies opts to the default settings; a nil option is an
// invalid argument.
func configure(opts []Option) (config, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return config{}, invalid("New", "nil option")
		}
		o.apply(&cfg)
	}
	return cfg, nil
}

// newNode returns a node of the checked settings cfg on drv.
func newNode(cfg config, drv driver.Driver) (*Node, error) {
	// One worker more than the concurrency: it moves the tasks that fall
	// due into their ready queues while the others run (concurrency.go).
	sched, err := scheduler.New(cfg.concurrency+1,
		scheduler.WithClock(cfg.clock),
		scheduler.WithLogger(cfg.logger),
		scheduler.WithRemoveOnCancel(true),
		// On Stop the tasks not yet due stay in the store, untouched.
		scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false))
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:            cfg,
		drv:            drv,
		name:           randomID()[:12],
		sched:          sched,
		handlers:       make(map[string]kindHandler),
		loaded:         make(map[string]*entry),
		ready:          make(map[string]*readyQueue),
		kindBusy:       make(map[string]int),
		claiming:       make(map[string]bool),
		canceledClaims: make(map[string]bool),
		credit:         make(map[string]int),
		warned:         make(map[string]time.Time),
		running:        make(map[string]*run),
		kick:           make(chan struct{}, 1),
		renewKick:      make(chan struct{}, 1),
		standbyKick:    make(chan struct{}, 1),
		trimKick:       make(chan struct{}, 1),
	}
	n.runCtx, n.runCancel = context.WithCancelCause(context.Background())
	return n, nil
}

// poolSize is the connection pool of rdb to the server that holds the
// store (a cluster client's pool is per server, 5 per CPU by default), or
// 0 for a client whose pool it cannot tell.
func poolSize(rdb redis.UniversalClient) int {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().PoolSize
	case *redis.ClusterClient:
		return c.Options().PoolSize
	}
	return 0
}

// Handle registers h for the tasks of kind (asynq's ServeMux.HandleFunc,
// River's AddWorker). Register every kind before scheduling it; a node
// claims only the kinds it handles, so nodes of a rolling deploy may differ.
// A nil h, an empty kind, one with white space, longer than 200 bytes or
// starting with "@" (kept for periodic tasks), a kind already registered,
// a nil option or a negative time limit is an error wrapping
// scheduler.ErrInvalidArgument. WithTaskTimeout sets the kind's time limit.
func (n *Node) Handle(kind string, h Handler, opts ...HandleOption) error {
	what := "handle " + kind
	if err := validKind(kind); err != nil {
		return err
	}
	if strings.HasPrefix(kind, "@") {
		return invalid(what, "the @ prefix is kept for periodic tasks")
	}
	kh, err := newKindHandler(what, h, opts)
	if err != nil {
		return err
	}
	if periodicSettings(opts).given {
		return invalid(what, "WithMisfire and WithOverlap are options of Periodic")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.handlers[kind]; dup {
		return invalid(what, "kind already has a handler")
	}
	n.handlers[kind] = kh
	n.weighted = n.weighted || kh.weight > 0
	return nil
}

// newKindHandler applies opts to h; a nil h or option is an invalid
// argument of what.
func newKindHandler(what string, h Handler, opts []HandleOption) (kindHandler, error) {
	if h == nil {
		return kindHandler{}, invalid(what, "nil handler")
	}
	var hc handleConfig
	for _, o := range opts {
		if o == nil {
			return kindHandler{}, invalid(what, "nil option")
		}
		o.applyHandle(&hc)
	}
	switch {
	case hc.timeout < 0:
		return kindHandler{}, invalid(what, "task timeout %v < 0", hc.timeout)
	case hc.limitSet && hc.limit < 1:
		return kindHandler{}, invalid(what, "kind concurrency %d < 1", hc.limit)
	case hc.weightSet && hc.weight < 1:
		return kindHandler{}, invalid(what, "kind priority %d < 1", hc.weight)
	}
	return kindHandler{fn: h, timeout: hc.timeout, limit: hc.limit, weight: hc.weight}, nil
}

func validKind(kind string) error {
	if kind == "" || len(kind) > 200 || strings.ContainsFunc(kind, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return invalid("kind "+strconv.Quote(kind), "want 1 to 200 bytes without white space")
	}
	return nil
}

// randomID returns 32 random hex digits.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newToken returns a claim token no other claim anywhere uses.
func (n *Node) newToken() string {
	return n.name + ":" + strconv.FormatUint(n.seq.Add(1), 10)
}
