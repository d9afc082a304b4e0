package driver

import (
	"context"
	"time"
)

// Coordination is the group of a Driver's methods that the nodes of a
// keyspace share beside the tasks: readying the store (CheckLayout,
// Prepare), the membership and member records (Renew, Members), the
// periodic declarations, their runs and their cursors
// (PeriodicDeclarations, PeriodicStates, RecordPeriodicRun, Cursors,
// WriteCursors), and the notices nodes hear from each other (Subscribe,
// AnnounceMembership, AnnounceEnded). Every time a driver stamps here (a heartbeat, an expiry,
// whether a record is live) is the store's clock.
type Coordination interface {
	// CheckLayout makes sure, atomically, that the keyspace is laid out
	// as the driver reads it, recording the layout if none is recorded (a
	// fresh keyspace); a node checks it before anything else. A keyspace
	// laid out otherwise (tasks of an earlier layout, another number of
	// partitions, an unknown layout version) is a *LayoutError wrapping
	// ErrLayout; errors of the store are returned as they come. River
	// checks its schema's migration version the same way before it
	// starts.
	CheckLayout(ctx context.Context) error
	// Prepare readies whatever makes the first call of each operation of
	// a node that runs tasks as fast as the next (Redis: it loads the
	// scripts); a node calls it once the layout is checked.
	Prepare(ctx context.Context) error
	// RecordedPartitions is the number of partitions recorded for the
	// keyspace, or 0 if no node of this layout has started on it yet. A
	// record of an unknown layout version, or of a number that is not
	// one, is a *LayoutError wrapping ErrLayout.
	RecordedPartitions(ctx context.Context) (int, error)

	// Renew renews, atomically, the membership of r.Node for r.TTL (as a
	// claimer of r.Kinds, or not), its member record and its periodic
	// declarations (each kept at least as long as the membership), drops
	// the claimers whose membership expired, and returns the live
	// claimers, the store's time and whether the claimers changed (this
	// node joined or left them, or found one expired). A zero r.TTL
	// removes the node's membership and record; Changed then says
	// whether it was a claimer. asynq's heartbeater writes its
	// ServerInfo so, River's producers table likewise.
	Renew(ctx context.Context, r Renewal) (Membership, error)
	// Members are the live member records (those whose expiry is ahead
	// of the store's clock), in no order; a record gone between the
	// reads is left out.
	Members(ctx context.Context) ([]Member, error)
	// PeriodicDeclarations are the live periodic declarations, in no
	// order, each with its last recorded run.
	PeriodicDeclarations(ctx context.Context) ([]PeriodicDeclaration, error)
	// PeriodicStates reads, for each periodic task of names, its stored
	// settings and the due times of its pending occurrences that the
	// misfire policy chooses among at now (PeriodicState), in one round
	// trip; a task with nothing stored has the zero PeriodicState.
	PeriodicStates(ctx context.Context, names []string, now time.Time) (map[string]PeriodicState, error)
	// RecordPeriodicRun records run as the last run of periodic task
	// name in its declaration; a declaration that expired meanwhile is
	// not written back, and that is no error.
	RecordPeriodicRun(ctx context.Context, name string, run PeriodicRun) error
	// Cursors are the cursors of the periodic tasks names (the latest
	// occurrence any node stored), in order: the zero Time for a task
	// with none. A cursor never expires.
	Cursors(ctx context.Context, names []string) ([]time.Time, error)
	// WriteCursors writes each cursor's settings and moves it forward to
	// its Stored occurrence, never back (a zero Stored moves nothing).
	WriteCursors(ctx context.Context, cursors []Cursor) error

	// Subscribe subscribes to the membership notices, and returns once
	// the store confirmed it; the partitions' notices follow
	// Subscription.Follow. on is called with every notice from the
	// driver's own goroutines (several at once, one per connection to
	// the store), and must not block for long. After a connection is
	// lost the driver subscribes again by itself; every (re)subscription
	// but the first of the membership notices (which Subscribe's return
	// confirms) is a NoticeSubscribed, since notices sent while it was
	// down are lost. asynq's servers hear cancellations so (Redis
	// pub/sub), River's producers by LISTEN/NOTIFY.
	Subscribe(ctx context.Context, on func(Notice)) (Subscription, error)
	// AnnounceMembership sends the membership notice (NoticeMembership)
	// to every subscribed node.
	AnnounceMembership(ctx context.Context) error
	// AnnounceEnded sends NoticeEnded of the occurrences' kind of
	// periodic task name to the nodes that follow its partition
	// (PeriodicPartition): a run of one of its occurrences ended.
	AnnounceEnded(ctx context.Context, name string) error
}

// LayoutError is a keyspace laid out otherwise than the driver reads it.
// It wraps ErrLayout; package cluster says why in its own words.
type LayoutError struct {
	// Reason is what is wrong.
	Reason LayoutReason
	// Found is what the driver found: for LayoutOld and LayoutStray what
	// holds the tasks of the earlier layout, for LayoutVersion the
	// version recorded, for LayoutPartitions the number recorded (the
	// text of the record, which may not be a number).
	Found string
	// Record names where the layout is recorded (the Redis driver: its
	// key).
	Record string
}

// LayoutReason says what is wrong with a keyspace's layout.
type LayoutReason int

const (
	// LayoutOld: the keyspace holds tasks of the earlier single-slot
	// layout and records no layout: it must be migrated.
	LayoutOld LayoutReason = iota + 1
	// LayoutStray: the keyspace was migrated, but holds tasks of the
	// earlier layout again (a node of an earlier version runs on it).
	LayoutStray
	// LayoutVersion: the record names a layout version the driver does
	// not know.
	LayoutVersion
	// LayoutPartitions: the record names another number of partitions
	// than the driver's.
	LayoutPartitions
)

func (e *LayoutError) Error() string {
	return "cluster: keyspace layout mismatch: " + e.Reason.String() + " (" + e.Found + ")"
}

func (e *LayoutError) Unwrap() error { return ErrLayout }

func (r LayoutReason) String() string {
	switch r {
	case LayoutOld:
		return "tasks of the single-slot layout"
	case LayoutStray:
		return "tasks of the single-slot layout after the migration"
	case LayoutVersion:
		return "unknown layout version"
	case LayoutPartitions:
		return "another number of partitions"
	}
	return "unknown reason"
}

// Renewal is what Renew writes of one node.
type Renewal struct {
	// Node names the node.
	Node string
	// TTL is how long the membership, the record and the declarations
	// live unless renewed; 0 removes the membership and the record.
	TTL time.Duration
	// Claimer says the node claims tasks: it is among the live claimers,
	// handling Kinds. A stopping node renews its record only.
	Claimer bool
	Kinds   []string
	// Record is the node's member record; its Name, Heartbeat and
	// Expires are ignored (the store stamps them).
	Record Member
	// Periodic are the node's periodic declarations.
	Periodic []PeriodicDeclaration
}

// Membership is what Renew read.
type Membership struct {
	// Live are the live claimers.
	Live []LiveNode
	// Now is the store's time of the renewal.
	Now time.Time
	// Changed says the claimers changed (see Renew).
	Changed bool
}

// LiveNode is a live claimer and the kinds it handles.
type LiveNode struct {
	Name  string
	Kinds []string
}

// Member is one live node as its record in the store shows it.
type Member struct {
	// Name names the node (Node.Name): the stem of its claim tokens, the
	// name the rendezvous hashing of partitions uses, and the node of
	// RunRecord.Node and Info.Owner.
	Name string
	// Host and PID are the machine and the process the node runs in.
	Host string
	PID  int
	// Version is the version of the cluster module the node was built
	// with, as the Go toolchain recorded it ("(devel)" for a build of
	// the module itself or inside a workspace).
	Version string
	// Started is when the node started, by its own clock as Start read it
	// (not corrected by its offset from the store's).
	Started time.Time
	// Heartbeat is when the node last renewed its record, and Expires
	// when the record goes unless renewed again, both by the store's
	// clock.
	Heartbeat, Expires time.Time
	// Concurrency is the node's number of workers (WithConcurrency).
	Concurrency int
	// Running counts the tasks the node held a claim on at its last
	// renewal; Windowed the tasks of its window (due within WithWindow,
	// waiting in memory), Waiting those of them already due and
	// waiting for a free worker or for their kind's limit
	// (WithKindConcurrency).
	Running, Windowed, Waiting int
	// Owned and BackedUp count the partitions the node owned and backed
	// up for at least one of its kinds at its last renewal (Stats).
	Owned, BackedUp int
	// Kinds are the kinds the node handles, sorted; a periodic task
	// declared with Node.Periodic appears as "@" + its name.
	Kinds []string
	// Stopping is true from the moment Stop or StopNow was called until
	// the node has stopped: it claims nothing more.
	Stopping bool
}

// PeriodicDeclaration is a periodic task as its declaring nodes write it.
type PeriodicDeclaration struct {
	// Name is the periodic task's name.
	Name string
	// Trigger describes its trigger.
	Trigger string
	// Next is the trigger's next time after the renewal, or the zero
	// Time if it has no more.
	Next time.Time
	// LastRun is the last run recorded while the declaration lived, or
	// nil; Renew ignores it.
	LastRun *PeriodicRun
}

// PeriodicRun is one run of a periodic task's occurrence.
type PeriodicRun struct {
	// Node is the name of the node that ran it (Node.Name).
	Node string
	// Due is the occurrence's due time (its Task.Due).
	Due time.Time
	// Started and Ended are when the handler was called and when its
	// outcome was recorded, by the running node's clock corrected by its
	// offset from the store's.
	Started, Ended time.Time
	// Outcome is how the run ended, as Observer.Ended reports it:
	// OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut, OutcomeLost
	// (its lease was lost, its outcome could not be written, or StopNow
	// left it to its lease), OutcomeCanceled or OutcomeHandedBack.
	Outcome Outcome
	// Error is the handler's error, or "" for a completed run.
	Error string
}

// PeriodicState is what the store holds of a periodic task's
// occurrences: its settings as a node last wrote them to its cursor
// (Found false if none did) and, among its pending occurrences, the
// first, the latest due at the time asked (Overdue) and the first after
// it (Onwards), each the zero Time if there is none.
type PeriodicState struct {
	Found bool
	// Misfire is the policy's name as the cursor holds it ("coalesce",
	// "skip" or "each"); Overlap its overlap setting.
	Misfire string
	Overlap bool
	// First, Overdue and Onwards are due times of pending occurrences.
	First, Overdue, Onwards time.Time
}

// Cursor is what WriteCursors writes of one periodic task.
type Cursor struct {
	// Name is the periodic task's name.
	Name string
	// Stored is the latest occurrence stored, or the zero Time.
	Stored time.Time
	// Misfire (the policy's name: "coalesce", "skip" or "each") and
	// Overlap are the task's settings.
	Misfire string
	Overlap bool
}

// Subscription is a node's subscription to the notices.
type Subscription interface {
	// Follow makes the subscription cover exactly the notices of the
	// partitions parts (by index), besides the membership notices.
	Follow(ctx context.Context, parts []int) error
	// Close ends the subscription and returns once no call of its on is
	// running or will start.
	Close()
}

// NoticeKind tells the notices apart.
type NoticeKind int

const (
	// NoticeSubscribed: a partitions' subscription (re)started; notices
	// sent while it was down are lost, so the node looks again.
	NoticeSubscribed NoticeKind = iota + 1
	// NoticeInterrupted: receiving failed (Err); the driver tries again.
	NoticeInterrupted
	// NoticePending: Tasks became pending.
	NoticePending
	// NoticeClaimed: a node won the claim of task ID.
	NoticeClaimed
	// NoticeCanceled: task ID was canceled.
	NoticeCanceled
	// NoticeResumed: the tasks of kind TaskKind may be claimed again.
	NoticeResumed
	// NoticeEnded: a run of an occurrence of kind TaskKind (a periodic
	// task's) ended.
	NoticeEnded
	// NoticeMembership: the claimers changed.
	NoticeMembership
)

// Notice is one notice a node hears. A notice is a hint: one lost while
// a subscription was down is made up by the look every NoticeSubscribed
// asks for.
type Notice struct {
	Kind NoticeKind
	// ID is the task of NoticeClaimed and NoticeCanceled.
	ID string
	// TaskKind is the kind of NoticeResumed and NoticeEnded.
	TaskKind string
	// Tasks are the tasks of NoticePending.
	Tasks []NoticedTask
	// Err is the error of NoticeInterrupted.
	Err error
}

// NoticedTask is a task a NoticePending announces: its ID, its kind and
// when it runs.
type NoticedTask struct {
	ID, Kind string
	Due      time.Time
}

// MigrateReport says what a migration from the single-slot layout of the
// Redis versions before partitions moved (the Redis driver's Migrate).
type MigrateReport struct {
	// Partitions is the number of partitions the tasks were moved into.
	Partitions int
	// Pending, Running, Dead and Done count the tasks moved, by state.
	Pending, Running, Dead, Done int
	// Unindexed counts the task hashes found in no state's set (which no
	// operation of the earlier version showed either); they were moved
	// as they were.
	Unindexed int
	// Markers counts the done markers moved, each with the time it had
	// left to live.
	Markers int
	// Dropped counts the entries of the old sets whose task hash was
	// gone: tasks an interrupted run had already copied, or entries no
	// task backed. They were removed.
	Dropped int
	// PausedKinds are the kinds that were paused: they are paused in
	// every partition.
	PausedKinds []string
	// Elapsed is how long the migration took.
	Elapsed time.Duration
}

// Tasks is the number of tasks moved, in any state.
func (r MigrateReport) Tasks() int {
	return r.Pending + r.Running + r.Dead + r.Done + r.Unindexed
}
