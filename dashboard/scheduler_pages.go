package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
)

// The in-process Scheduler's pages: the overview with its charts and
// recent failures, and the queue, paged and searchable by name.

const (
	// defaultQueueLimit is the most queued tasks a page may show unless
	// WithQueueLimit says otherwise.
	defaultQueueLimit = 1000
	// defaultQueuePage is how many a page shows unless ?limit= says.
	defaultQueuePage = 100
	// maxQueueWalk is how deep into the queue paging and the name search
	// reach: PeekQueue walks the queue's head under its lock, so a page
	// past it is refused and a search says it looked at this many only.
	maxQueueWalk = 10_000
)

// overviewData is the overview page: the counters, the charts and the
// latest failed runs.
type overviewData struct {
	Stats    scheduler.Stats
	History  scheduler.RunHistory
	Runs     chart
	Late     chart
	Failed   chart
	Failures []failureRow
}

// failureRow is one failed run, its kind as text (one-shot, fixed rate,
// ...) in place of the TaskKind.
type failureRow struct {
	scheduler.RunFailure
	Kind string
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	hist := h.s.RunHistory(historyWindow)
	d := overviewData{
		Stats:   h.s.Stats(),
		History: hist,
		Runs:    runsChart(hist),
		Late:    latenessChart(hist),
		Failed:  failedChart(hist),
	}
	for _, f := range hist.Failures {
		d.Failures = append(d.Failures, failureRow{RunFailure: f, Kind: f.Kind.String()})
	}
	h.render(w, r, http.StatusOK, "overview", "Overview", d)
}

// queueData is one page of the queue and the runs in progress.
type queueData struct {
	Limit, Offset int
	Search        string
	Queued        []queuedRow
	Running       []runningRow
	Total         int // tasks queued
	// Matched counts the search's matches within the tasks Walked (the
	// first maxQueueWalk); Cut says the walk stopped before the queue's
	// end.
	Matched, Walked int
	Cut             bool
	Next, Prev      int // offsets of the next and previous pages, -1 for none
}

type queuedRow struct {
	ID       scheduler.TaskID
	Name     string
	Kind     string
	Due      time.Time
	Every    string
	Canceled bool
}

type runningRow struct {
	Name    string
	Due     time.Time
	Started time.Time
	Late    time.Duration
}

// queueQuery reads the queue page's limit and offset: positive and at most
// the limits, or an error that says the most.
func (h *Handler) queueQuery(r *http.Request) (limit, offset int, err error) {
	q := r.URL.Query()
	limit = min(defaultQueuePage, h.cfg.queueLimit)
	if v := q.Get("limit"); v != "" {
		limit, err = strconv.Atoi(v)
		if err != nil || limit < 1 || limit > h.cfg.queueLimit {
			return 0, 0, fmt.Errorf("%w: limit %q: must be a whole number from 1 to %d (WithQueueLimit)", ErrInvalidArgument, v, h.cfg.queueLimit)
		}
	}
	if v := q.Get("offset"); v != "" {
		offset, err = strconv.Atoi(v)
		if err != nil || offset < 0 || offset >= maxQueueWalk {
			return 0, 0, fmt.Errorf("%w: offset %q: must be a whole number from 0 to %d: the page reads at most the first %d queued tasks", ErrInvalidArgument, v, maxQueueWalk-1, maxQueueWalk)
		}
	}
	return limit, offset, nil
}

func (h *Handler) queue(w http.ResponseWriter, r *http.Request) {
	limit, offset, err := h.queueQuery(r)
	if err != nil {
		h.refuse(w, r, http.StatusBadRequest, err.Error(), "queue")
		return
	}
	search := strings.TrimSpace(r.URL.Query().Get("q"))
	d := queueData{Limit: limit, Offset: offset, Search: search, Total: h.s.Stats().Queued, Next: -1, Prev: -1}
	var tasks []scheduler.QueuedTask
	if search == "" {
		end := min(offset+limit, maxQueueWalk)
		tasks = h.s.PeekQueue(end)
		d.Walked, d.Matched = len(tasks), len(tasks)
		tasks = tasks[min(offset, len(tasks)):]
		if end < d.Total && end < maxQueueWalk {
			d.Next = end
		}
	} else {
		all := h.s.PeekQueue(maxQueueWalk)
		d.Walked, d.Cut = len(all), d.Total > len(all)
		needle := strings.ToLower(search)
		for _, t := range all {
			if strings.Contains(strings.ToLower(t.Name), needle) {
				if d.Matched >= offset && d.Matched < offset+limit {
					tasks = append(tasks, t)
				}
				d.Matched++
			}
		}
		if offset+limit < d.Matched {
			d.Next = offset + limit
		}
	}
	if offset > 0 {
		d.Prev = max(0, offset-limit)
	}
	for _, t := range tasks {
		row := queuedRow{ID: t.ID, Name: t.Name, Kind: t.Kind.String(), Due: t.Due, Canceled: t.Canceled}
		switch {
		case t.Trigger != nil:
			row.Every = fmt.Sprint(t.Trigger)
		case t.Period > 0:
			row.Every = t.Period.String()
		}
		d.Queued = append(d.Queued, row)
	}
	for _, run := range h.s.Running() {
		d.Running = append(d.Running, runningRow{Name: run.Future.Name(), Due: run.Due, Started: run.Started, Late: run.Started.Sub(run.Due) - run.Jitter})
	}
	h.render(w, r, http.StatusOK, "queue", "Queue", d)
}

// cancel cancels one queued task by ID (Cancel(false): a run in progress
// is left to finish) after a confirmation, and sends the browser back to
// the queue page. A task no longer queued is a 409 refusal.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	if !h.allowAction(w, r) {
		return
	}
	raw := r.PostFormValue("id")
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("dashboard: task id %q: not a task id", raw), "queue")
		return
	}
	f, ok := h.s.TaskByID(scheduler.TaskID(id))
	if !ok {
		h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("dashboard: cancel task %d: it is no longer queued (it ran, or was canceled)", id), "queue")
		return
	}
	if !confirmed(r) {
		name := f.Name()
		if name == "" {
			name = "(no name)"
		}
		h.askConfirm(w, r, confirmData{
			Question: fmt.Sprintf("Cancel task %d, %s?", id, name),
			Details:  []string{"It will not run again; a run in progress finishes."},
			Action:   "cancel", Button: "Cancel the task", Back: "queue",
			Fields: map[string][]string{"id": {raw}},
		})
		return
	}
	if !f.Cancel(false) {
		h.refuse(w, r, http.StatusConflict, fmt.Sprintf("dashboard: cancel task %d: it was already done", id), "queue")
		return
	}
	h.done(w, r, "queue", fmt.Sprintf("task %d canceled", id))
}
