package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
)

// The cluster's pages: what the store holds, read through the node's
// methods. They are asynqmon's and River UI's pages for the cluster module.

// clusterTimeout bounds the Redis calls of one page or action, so that a
// store that does not answer gives an error page instead of a hung one.
const clusterTimeout = 5 * time.Second

// recentFailures is how many dead tasks the cluster overview lists.
const recentFailures = 10

// states are the states a listing can show, in the tabs' order.
var states = []cluster.State{cluster.Pending, cluster.Running, cluster.Dead, cluster.Done}

func (h *Handler) routeCluster() {
	h.mux.Handle("GET /cluster", relativeRedirect("cluster/"))
	h.mux.HandleFunc("GET /cluster/{$}", h.clusterOverview)
	h.mux.HandleFunc("GET /cluster/tasks", h.clusterTasks)
	h.mux.HandleFunc("GET /cluster/task", h.clusterTask)
	h.mux.HandleFunc("GET /cluster/nodes", h.clusterNodes)
	h.mux.HandleFunc("GET /cluster/periodic", h.clusterPeriodic)
	h.routeClusterActions()
}

// clusterContext is the context of one page's or action's Redis calls.
func clusterContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), clusterTimeout)
}

// clusterError renders the error of a cluster call: 400 for bad input (an
// error wrapping scheduler.ErrInvalidArgument), 502 when the store failed.
func (h *Handler) clusterError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusBadGateway
	if errors.Is(err, scheduler.ErrInvalidArgument) || errors.Is(err, ErrInvalidArgument) {
		code = http.StatusBadRequest
	}
	h.refuse(w, r, code, err.Error(), "")
}

// clusterOverviewData is the cluster overview: counts by state, in all and
// by kind, and the latest dead tasks.
type clusterOverviewData struct {
	Counts   cluster.Counts
	Kinds    []cluster.KindCounts
	Failures []cluster.Info
	More     bool // there are more dead tasks than listed
	Timeline timelineView
}

func (h *Handler) clusterOverview(w http.ResponseWriter, r *http.Request) {
	span, spanDur, err := timelineSpan(r)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	ctx, cancel := clusterContext(r)
	defer cancel()
	counts, kinds, err := h.cfg.node.CountsByKind(ctx)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	dead, err := h.cfg.node.List(ctx, cluster.ListQuery{State: cluster.Dead, Limit: recentFailures})
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	tl, err := h.timeline(ctx, "", span, spanDur, nil)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	d := clusterOverviewData{Counts: counts, Kinds: kinds, Failures: dead.Tasks, More: dead.Next != "", Timeline: tl}
	h.render(w, r, http.StatusOK, "cluster", "Cluster", d)
}

// clusterTasksData is one page of a listing by state, and kind if given.
type clusterTasksData struct {
	State  cluster.State
	Kind   string // "" for every kind
	States []cluster.State
	Limit  int
	Cursor string // the page's own cursor, "" for the first
	Tasks  []taskRow
	Next   string // the next page's cursor, "" after the last
	// Counts are the tabs' counts, of Kind if given.
	Counts cluster.Counts
	// Total is the count of State, for "all N matching".
	Total int64
	// Actions are the bulk actions the listing offers.
	Actions []bulkChoice
	// Timeline is the kind's per-minute history, nil without a kind.
	Timeline *timelineView
}

// taskRow is one task of a listing.
type taskRow struct {
	cluster.Info
	Canceled bool // a done record of a canceled task
}

func (h *Handler) clusterTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := cluster.State(q.Get("state"))
	if state == "" {
		state = cluster.Pending
	}
	limit, err := h.pageLimit(q.Get("limit"))
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	span, spanDur, err := timelineSpan(r)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	ctx, cancel := clusterContext(r)
	defer cancel()
	kind := strings.TrimSpace(q.Get("kind"))
	page, err := h.cfg.node.List(ctx, cluster.ListQuery{State: state, Kind: kind, Cursor: q.Get("cursor"), Limit: limit})
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	counts, err := h.stateCounts(ctx, kind)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	d := clusterTasksData{State: state, Kind: kind, States: states, Limit: limit, Cursor: q.Get("cursor"), Next: page.Next,
		Counts: counts, Total: countOf(counts, state), Actions: bulkActionsFor(state)}
	for _, t := range page.Tasks {
		d.Tasks = append(d.Tasks, taskRow{Info: t, Canceled: wasCanceled(t)})
	}
	if kind != "" {
		tl, err := h.timeline(ctx, kind, span, spanDur, url.Values{"state": {string(state)}, "kind": {kind}})
		if err != nil {
			h.clusterError(w, r, err)
			return
		}
		d.Timeline = &tl
	}
	h.render(w, r, http.StatusOK, "cluster_tasks", "Tasks", d)
}

// stateCounts counts the stored tasks by state, of kind if not "".
func (h *Handler) stateCounts(ctx context.Context, kind string) (cluster.Counts, error) {
	all, kinds, err := h.cfg.node.CountsByKind(ctx)
	if err != nil || kind == "" {
		return all, err
	}
	for _, k := range kinds {
		if k.Kind == kind {
			return k.Counts, nil
		}
	}
	return cluster.Counts{}, nil
}

// countOf is c's count of state.
func countOf(c cluster.Counts, state cluster.State) int64 {
	switch state {
	case cluster.Pending:
		return c.Pending
	case cluster.Running:
		return c.Running
	case cluster.Dead:
		return c.Dead
	case cluster.Done:
		return c.Done
	}
	return 0
}

// wasCanceled reports whether a done record is of a task Node.Cancel
// removed rather than one that completed (Info.Canceled).
func wasCanceled(info cluster.Info) bool { return info.State == cluster.Done && info.Canceled }

// pageLimit reads a ?limit= query: the page size unless given, else a
// whole number from 1 to cluster.MaxPage; anything else is refused.
func (h *Handler) pageLimit(q string) (int, error) {
	if q == "" {
		return h.cfg.pageSize, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > cluster.MaxPage {
		return 0, fmt.Errorf("%w: limit %q: must be a whole number from 1 to %d", ErrInvalidArgument, q, cluster.MaxPage)
	}
	return n, nil
}

// clusterTaskData is one task's page.
type clusterTaskData struct {
	ID      string
	Found   bool
	Info    cluster.Info
	Payload payloadView
	// Error is the last error's first line; Stack the lines after it (a
	// panic's stack), if any.
	Error, Stack string
	// RescheduleAt is the reschedule field's first value: the task's
	// next run, in the field's format and the page's zone.
	RescheduleAt string
	// Canceled: a done record of a task Node.Cancel removed.
	Canceled bool
	// FailedInHistory counts the failed, timed-out and lost runs among
	// the runs recorded, which a Retry does not forget.
	FailedInHistory int
}

func (h *Handler) clusterTask(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := strings.TrimSpace(q.Get("id"))
	if id == "" {
		h.clusterError(w, r, fmt.Errorf("%w: task id: is empty", ErrInvalidArgument))
		return
	}
	ctx, cancel := clusterContext(r)
	defer cancel()
	info, ok, err := h.cfg.node.Get(ctx, id)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	d := clusterTaskData{ID: id, Found: ok}
	code := http.StatusOK
	if !ok {
		code = http.StatusNotFound
	} else {
		d.Info = info
		d.Payload = viewPayload(info.Payload, q.Get("payload") == "all")
		d.Error, d.Stack, _ = strings.Cut(info.LastError, "\n")
		d.RescheduleAt = nextRun(info).In(zoneOf(r)).Format(rescheduleLayout)
		d.Canceled = wasCanceled(info)
		for _, run := range info.History {
			if run.Outcome == cluster.OutcomeFailed || run.Outcome == cluster.OutcomeTimedOut || run.Outcome == cluster.OutcomeLost {
				d.FailedInHistory++
			}
		}
	}
	h.render(w, r, code, "cluster_task", "Task "+id, d)
}

// clusterNodesData is the nodes page: the live nodes' records, and the
// health of the node the dashboard reads through.
type clusterNodesData struct {
	Members []cluster.Member
	Health  cluster.Health
	Self    string // the name of the node the dashboard reads through
}

func (h *Handler) clusterNodes(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := clusterContext(r)
	defer cancel()
	members, err := h.cfg.node.Members(ctx)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	health, err := h.cfg.node.Health(ctx, time.Second)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	d := clusterNodesData{Members: members, Health: health, Self: h.cfg.node.Name()}
	h.render(w, r, http.StatusOK, "cluster_nodes", "Nodes", d)
}

// clusterPeriodicData is the periodic tasks page.
type clusterPeriodicData struct {
	Tasks  []periodicRow
	Paused map[string]bool // by kind ("@" + name)
}

// periodicRow is one periodic task and the kind of its occurrences.
type periodicRow struct {
	cluster.PeriodicInfo
	Kind string
}

func (h *Handler) clusterPeriodic(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := clusterContext(r)
	defer cancel()
	tasks, err := h.cfg.node.PeriodicTasks(ctx)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	paused, err := h.cfg.node.PausedKinds(ctx)
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	d := clusterPeriodicData{Paused: make(map[string]bool, len(paused))}
	for _, k := range paused {
		d.Paused[k] = true
	}
	for _, t := range tasks {
		d.Tasks = append(d.Tasks, periodicRow{PeriodicInfo: t, Kind: "@" + t.Name})
	}
	h.render(w, r, http.StatusOK, "cluster_periodic", "Periodic tasks", d)
}

// nextRun is when a pending task runs next (Info.NextRun: the retry's
// time when retrying, the moved time after a run now), its due time if
// the store does not say.
func nextRun(info cluster.Info) time.Time {
	if !info.NextRun.IsZero() {
		return info.NextRun
	}
	return info.Due
}
