package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The cluster's actions: POST forms with the CSRF token, off on a
// read-only dashboard. Each calls one of the node's actions and sends the
// browser back with a message saying what happened; an action the task's
// state forbids (cluster.ErrWrongState) or on a task that is gone
// (cluster.ErrNotFound) is no failure of the page: the message gives the
// refusal, as asynqmon's and River UI's notices do.

// rescheduleLayout is the reschedule field's format: a datetime-local
// input's value, read as UTC.
const rescheduleLayout = "2006-01-02T15:04:05"

func (h *Handler) routeClusterActions() {
	h.mux.HandleFunc("POST /cluster/run-now", h.taskAction("run now", func(r *http.Request, id string) (string, error) {
		return "runs now", h.cfg.node.RunNow(r.Context(), id)
	}))
	h.mux.HandleFunc("POST /cluster/retry", h.taskAction("retry", func(r *http.Request, id string) (string, error) {
		return "retried: pending, due now", h.cfg.node.Retry(r.Context(), id)
	}))
	h.mux.HandleFunc("POST /cluster/reschedule", h.taskAction("reschedule", func(r *http.Request, id string) (string, error) {
		at, err := parseRescheduleTime(r.PostFormValue("at"))
		if err != nil {
			return "", err
		}
		return "rescheduled to " + at.Format(time.DateTime) + " UTC", h.cfg.node.Reschedule(r.Context(), id, at)
	}))
	h.mux.HandleFunc("POST /cluster/cancel", h.taskAction("cancel", func(r *http.Request, id string) (string, error) {
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
	h.mux.HandleFunc("POST /cluster/delete", h.taskAction("delete", func(r *http.Request, id string) (string, error) {
		return "deleted", h.cfg.node.Delete(r.Context(), id)
	}))
	h.mux.HandleFunc("POST /cluster/pause", h.kindAction("pause", func(r *http.Request, kind string) error {
		return h.cfg.node.Pause(r.Context(), kind)
	}))
	h.mux.HandleFunc("POST /cluster/resume", h.kindAction("resume", func(r *http.Request, kind string) error {
		return h.cfg.node.Resume(r.Context(), kind)
	}))
}

// kindAction is the handler of an action on a kind, the form's kind
// (asynqmon's and River UI's pause and resume of a queue): it checks the
// token, calls act and sends the browser back to the cluster overview (or
// the periodic tasks page, if the form's back field says "periodic") with
// a message. An invalid kind is a 400, a store that fails the error
// page.
func (h *Handler) kindAction(what string, act func(r *http.Request, kind string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.allowAction(w, r) {
			return
		}
		kind := strings.TrimSpace(r.PostFormValue("kind"))
		ctx, cancel := clusterContext(r)
		defer cancel()
		if err := act(r.WithContext(ctx), kind); err != nil {
			h.clusterError(w, r, err)
			return
		}
		back := "./"
		if r.PostFormValue("back") == "periodic" {
			back = "periodic"
		}
		seeOther(w, back+"?msg="+urlQueryEscape("kind "+kind+" "+what+"d"))
	}
}

// taskAction is the handler of an action on one task, the form's id: it
// checks the token, calls act and sends the browser back to the task's
// page with act's message (or the refusal). A store that fails gives the
// error page.
func (h *Handler) taskAction(what string, act func(r *http.Request, id string) (string, error)) http.HandlerFunc {
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
		done, err := act(r.WithContext(ctx), id)
		var msg string
		switch {
		case err == nil:
			msg = "task " + id + " " + done
		case errors.Is(err, cluster.ErrNotFound), errors.Is(err, cluster.ErrWrongState):
			msg = err.Error()
		default:
			h.clusterError(w, r, err)
			return
		}
		seeOther(w, "task?id="+urlQueryEscape(id)+"&msg="+urlQueryEscape(msg))
	}
}

// parseRescheduleTime reads the reschedule field, UTC, with or without
// seconds.
func parseRescheduleTime(v string) (time.Time, error) {
	for _, layout := range []string{rescheduleLayout, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: reschedule time %q: want YYYY-MM-DDTHH:MM[:SS], UTC", ErrInvalidArgument, v)
}
