package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The cluster's actions: POST forms that pass the CSRF checks, off on a
// read-only dashboard. Each calls one of the node's actions and sends the
// browser back with a flash saying what happened. Delete and Cancel ask
// for a confirmation first (confirm.go). An action the task's state
// forbids (cluster.ErrWrongState) is refused with 409 Conflict and one on
// a task that is gone (cluster.ErrNotFound) with 404, on an error page
// that gives the cluster's reason and links back to the task, as
// asynqmon's and River UI's error notices do.

// rescheduleLayout is the reschedule field's format: a datetime-local
// input's value, read in the zone the form names.
const rescheduleLayout = "2006-01-02T15:04:05"

func (h *Handler) routeClusterActions() {
	h.mux.HandleFunc("POST /cluster/run-now", h.taskAction("run now", false, func(r *http.Request, id string) (string, error) {
		return "runs now", h.cfg.node.RunNow(r.Context(), id)
	}))
	h.mux.HandleFunc("POST /cluster/retry", h.taskAction("retry", false, func(r *http.Request, id string) (string, error) {
		return "retried: pending, due now", h.cfg.node.Retry(r.Context(), id)
	}))
	h.mux.HandleFunc("POST /cluster/reschedule", h.taskAction("reschedule", false, func(r *http.Request, id string) (string, error) {
		at, err := parseRescheduleTime(r.PostFormValue("at"), r.PostFormValue("tz"))
		if err != nil {
			return "", err
		}
		return "rescheduled to " + absolute(at, at.Location()), h.cfg.node.Reschedule(r.Context(), id, at)
	}))
	h.mux.HandleFunc("POST /cluster/cancel", h.taskAction("cancel", true, func(r *http.Request, id string) (string, error) {
		c, err := h.cfg.node.Cancel(r.Context(), id)
		switch {
		case err != nil:
			return "", err
		case !c.Removed:
			return "", fmt.Errorf("cluster: cancel %s: %w", id, cluster.ErrNotFound)
		case c.WasRunning:
			return "canceled; its run in flight is told to stop", nil
		}
		return "canceled", nil
	}))
	h.mux.HandleFunc("POST /cluster/delete", h.taskAction("delete", true, func(r *http.Request, id string) (string, error) {
		return "deleted", h.cfg.node.Delete(r.Context(), id)
	}))
	h.mux.HandleFunc("POST /cluster/pause", h.kindAction("pause", func(r *http.Request, kind string) error {
		return h.cfg.node.Pause(r.Context(), kind)
	}))
	h.mux.HandleFunc("POST /cluster/resume", h.kindAction("resume", func(r *http.Request, kind string) error {
		return h.cfg.node.Resume(r.Context(), kind)
	}))
	h.routeBulkActions()
}

// kindAction is the handler of an action on a kind, the form's kind
// (asynqmon's and River UI's pause and resume of a queue): it checks the
// request, calls act and sends the browser back to the cluster overview
// (or the periodic tasks page, if the form's back field says "periodic")
// with a flash. A kind nothing knows (cluster.ErrUnknownKind: no live node
// handles it, no task of it is stored, no periodic task declares it) is
// refused with 404, an invalid kind with 400, a store that fails a 502.
func (h *Handler) kindAction(what string, act func(r *http.Request, kind string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.allowAction(w, r) {
			return
		}
		kind := strings.TrimSpace(r.PostFormValue("kind"))
		ctx, cancel := clusterContext(r)
		defer cancel()
		back := "./"
		if r.PostFormValue("back") == "periodic" {
			back = "periodic"
		}
		if err := act(r.WithContext(ctx), kind); err != nil {
			if errors.Is(err, cluster.ErrUnknownKind) {
				h.refuse(w, r, http.StatusNotFound, err.Error(), back)
				return
			}
			h.clusterError(w, r, err)
			return
		}
		h.done(w, r, back, "kind "+kind+" "+what+"d")
	}
}

// taskAction is the handler of an action on one task, the form's id: it
// checks the request, asks for a confirmation first if ask, calls act and
// sends the browser back to the task's page with act's message. A refusal
// is an error page (409 or 404); a store that fails a 502.
func (h *Handler) taskAction(what string, ask bool, act func(r *http.Request, id string) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.allowAction(w, r) {
			return
		}
		id := strings.TrimSpace(r.PostFormValue("id"))
		if id == "" {
			h.clusterError(w, r, fmt.Errorf("%w: %s: empty task id", ErrInvalidArgument, what))
			return
		}
		ctx, cancel := clusterContext(r)
		defer cancel()
		back := "task?id=" + url.QueryEscape(id)
		if ask && !confirmed(r) {
			info, ok, err := h.cfg.node.Get(ctx, id)
			switch {
			case err != nil:
				h.clusterError(w, r, err)
			case !ok:
				h.refuse(w, r, http.StatusNotFound, fmt.Sprintf("cluster: %s %s: %v", what, id, cluster.ErrNotFound), back)
			default:
				h.askConfirm(w, r, confirmData{
					Question: fmt.Sprintf("%s task %s?", capitalize(what), id),
					Details:  []string{fmt.Sprintf("Kind %s, %s now.", info.Kind, info.State), consequence(what, 1)},
					Action:   what, Button: capitalize(what) + " the task", Back: back,
					Fields: map[string][]string{"id": {id}},
				})
			}
			return
		}
		done, err := act(r.WithContext(ctx), id)
		switch {
		case err == nil:
			h.done(w, r, back, "task "+id+" "+done)
		case errors.Is(err, cluster.ErrNotFound):
			h.refuse(w, r, http.StatusNotFound, err.Error(), back)
		case errors.Is(err, cluster.ErrWrongState):
			h.refuse(w, r, http.StatusConflict, err.Error(), back)
		default:
			h.clusterError(w, r, err)
		}
	}
}

// consequence says what an action that asks first does to n tasks.
func consequence(what string, n int64) string {
	them := "it"
	if n != 1 {
		them = "them"
	}
	switch what {
	case "delete":
		return "Deleting removes " + them + " for good; this cannot be undone."
	case "cancel":
		return "Canceling removes " + them + " (a run in flight is told to stop); this cannot be undone."
	case "retry":
		return "Retrying makes " + them + " pending, due now."
	case "run now":
		return "Running now moves " + them + " to the head of the pending tasks."
	}
	return ""
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// parseRescheduleTime reads the reschedule field, with or without
// seconds, in the zone the form names (UTC if none).
func parseRescheduleTime(v, zone string) (time.Time, error) {
	loc := time.UTC
	if zone != "" {
		l, err := loadZone(zone)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: reschedule zone %q: not a zone name", ErrInvalidArgument, zone)
		}
		loc = l
	}
	for _, layout := range []string{rescheduleLayout, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: reschedule time %q: want YYYY-MM-DDTHH:MM[:SS], %s", ErrInvalidArgument, v, loc)
}
