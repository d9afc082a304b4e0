package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	h.renderStatus(w, r, code, "error", "Error", err.Error(), "")
}

// clusterOverviewData is the cluster overview: counts by state, in all and
// by kind, and the latest dead tasks.
type clusterOverviewData struct {
	Counts   cluster.Counts
	Kinds    []cluster.KindCounts
	Failures []cluster.Info
	More     bool // there are more dead tasks than listed
}

func (h *Handler) clusterOverview(w http.ResponseWriter, r *http.Request) {
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
	d := clusterOverviewData{Counts: counts, Kinds: kinds, Failures: dead.Tasks, More: dead.Next != ""}
	h.render(w, r, "cluster", "Cluster", d, r.URL.Query().Get("msg"))
}

// clusterTasksData is one page of a listing by state, and kind if given.
type clusterTasksData struct {
	State  cluster.State
	Kind   string // "" for every kind
	States []cluster.State
	Limit  int
	Cursor string // the page's own cursor, "" for the first
	Tasks  []cluster.Info
	Next   string // the next page's cursor, "" after the last
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
	ctx, cancel := clusterContext(r)
	defer cancel()
	kind := strings.TrimSpace(q.Get("kind"))
	page, err := h.cfg.node.List(ctx, cluster.ListQuery{State: state, Kind: kind, Cursor: q.Get("cursor"), Limit: limit})
	if err != nil {
		h.clusterError(w, r, err)
		return
	}
	d := clusterTasksData{State: state, Kind: kind, States: states, Limit: limit, Cursor: q.Get("cursor"), Tasks: page.Tasks, Next: page.Next}
	h.render(w, r, "cluster_tasks", "Tasks", d, q.Get("msg"))
}

// pageLimit reads a ?limit= query: the page size unless given, at most the
// page size.
func (h *Handler) pageLimit(q string) (int, error) {
	if q == "" {
		return h.cfg.pageSize, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: limit %q: must be a positive whole number", ErrInvalidArgument, q)
	}
	return min(n, h.cfg.pageSize), nil
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
	// next run, in the field's UTC format.
	RescheduleAt string
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
		d.RescheduleAt = info.Due.UTC().Format(rescheduleLayout)
	}
	h.renderStatus(w, r, code, "cluster_task", "Task "+id, d, q.Get("msg"))
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
	h.render(w, r, "cluster_nodes", "Nodes", d, r.URL.Query().Get("msg"))
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
	h.render(w, r, "cluster_periodic", "Periodic tasks", d, r.URL.Query().Get("msg"))
}
