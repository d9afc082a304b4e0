package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// Bulk actions from a listing (asynqmon's batch actions, River UI's
// selection): tick rows, or choose every task matching the listing's state
// and kind, then retry, delete, cancel or run now. Every bulk action asks
// first, saying how many tasks it will touch (Node.CountSelected); only
// the confirming POST acts, through the node's bulk methods (RetryAll,
// DeleteAll, CancelAll, RunNowAll), and the flash says how many matched
// and how many changed (a task that moved on meanwhile is matched, not
// changed).

// bulkTimeout bounds a bulk action's Redis calls: longer than a page's, as
// one may change tens of thousands of tasks in batches.
const bulkTimeout = time.Minute

// bulkAction is one action a listing offers.
type bulkAction struct {
	Name   string          // the form's action value and the verb: "retry"
	States []cluster.State // the states it applies to
	run    func(h *Handler, r *http.Request, sel cluster.Selection) (cluster.BulkResult, error)
}

var bulkActionList = []bulkAction{
	{"run now", []cluster.State{cluster.Pending}, func(h *Handler, r *http.Request, sel cluster.Selection) (cluster.BulkResult, error) {
		return h.cfg.node.RunNowAll(r.Context(), sel)
	}},
	{"retry", []cluster.State{cluster.Dead}, func(h *Handler, r *http.Request, sel cluster.Selection) (cluster.BulkResult, error) {
		return h.cfg.node.RetryAll(r.Context(), sel)
	}},
	{"cancel", []cluster.State{cluster.Pending, cluster.Running, cluster.Dead}, func(h *Handler, r *http.Request, sel cluster.Selection) (cluster.BulkResult, error) {
		return h.cfg.node.CancelAll(r.Context(), sel)
	}},
	{"delete", []cluster.State{cluster.Dead, cluster.Done}, func(h *Handler, r *http.Request, sel cluster.Selection) (cluster.BulkResult, error) {
		return h.cfg.node.DeleteAll(r.Context(), sel)
	}},
}

// bulkChoice is a bulk action's button: its name and an element ID.
type bulkChoice struct {
	Name, ID string
}

// bulkActionsFor lists the actions a listing of state offers.
func bulkActionsFor(state cluster.State) []bulkChoice {
	var out []bulkChoice
	for _, a := range bulkActionList {
		if slices.Contains(a.States, state) {
			out = append(out, bulkChoice{Name: a.Name, ID: "bulk-" + strings.ReplaceAll(a.Name, " ", "-")})
		}
	}
	return out
}

func (h *Handler) routeBulkActions() {
	h.mux.HandleFunc("POST /cluster/bulk", h.bulk)
}

// bulk is the handler of the listings' bulk form: fields state, kind,
// action, id (repeated; the ticked rows) or scope=all, and, once
// confirmed, before (for "all": only tasks that were in the state when
// the confirmation was shown, for dead and done whose sets are ordered by
// that time).
func (h *Handler) bulk(w http.ResponseWriter, r *http.Request) {
	if !h.allowAction(w, r) {
		return
	}
	_ = r.ParseForm()
	state := cluster.State(r.PostFormValue("state"))
	kind := strings.TrimSpace(r.PostFormValue("kind"))
	name := r.PostFormValue("action")
	back := "tasks?state=" + url.QueryEscape(string(state))
	if kind != "" {
		back += "&kind=" + url.QueryEscape(kind)
	}
	i := slices.IndexFunc(bulkActionList, func(a bulkAction) bool { return a.Name == name })
	if i < 0 || !slices.Contains(bulkActionList[i].States, state) {
		h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("dashboard: bulk %q: not an action on %s tasks (these are: %s)", name, state, bulkNames(state)), back)
		return
	}
	act := bulkActionList[i]
	sel := cluster.Selection{State: state, Kind: kind}
	all := r.PostFormValue("scope") == "all"
	if !all {
		for _, id := range r.PostForm["id"] {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(sel.IDs, id) {
				sel.IDs = append(sel.IDs, id)
			}
		}
		if len(sel.IDs) == 0 {
			h.refuse(w, r, http.StatusBadRequest, "dashboard: bulk "+name+": no task selected: tick rows, or choose every task matching", back)
			return
		}
	}
	if v := r.PostFormValue("before"); v != "" {
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			h.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("dashboard: bulk %s: before %q: not a time", name, v), back)
			return
		}
		sel.Before = time.Unix(0, ns)
	} else if all && (state == cluster.Dead || state == cluster.Done) {
		sel.Before = time.Now()
	}
	ctx, cancel := context.WithTimeout(r.Context(), bulkTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	if !confirmed(r) {
		n, err := h.cfg.node.CountSelected(ctx, sel)
		if err != nil {
			h.bulkError(w, r, err, back)
			return
		}
		if n == 0 {
			h.refuse(w, r, http.StatusConflict, fmt.Sprintf("dashboard: bulk %s: no %s task matches now", name, state), back)
			return
		}
		fields := url.Values{"state": {string(state)}, "kind": {kind}, "action": {name}}
		if all {
			fields.Set("scope", "all")
		} else {
			fields["id"] = sel.IDs
		}
		if !sel.Before.IsZero() {
			fields.Set("before", strconv.FormatInt(sel.Before.UnixNano(), 10))
		}
		h.askConfirm(w, r, confirmData{
			Question: fmt.Sprintf("%s %d %s task%s%s?", capitalize(name), n, state, plural(n), ofKind(kind)),
			Details:  bulkDetails(name, n, all, sel),
			Action:   "bulk", Button: fmt.Sprintf("%s %d task%s", capitalize(name), n, plural(n)), Back: back,
			Fields: fields,
		})
		return
	}
	res, err := act.run(h, r, sel)
	if err != nil {
		h.bulkError(w, r, err, back)
		return
	}
	text := fmt.Sprintf("%s: %d of %d matching %s task%s%s", name, res.Changed, res.Matched, state, plural(res.Matched), ofKind(kind))
	if moved := res.Matched - res.Changed; moved > 0 {
		text += fmt.Sprintf(" (%d moved on meanwhile and were left alone)", moved)
	}
	h.done(w, r, back, text)
}

// bulkError refuses a bulk action the cluster refused: 400 for bad input,
// 404 for an unknown kind, 502 when the store failed.
func (h *Handler) bulkError(w http.ResponseWriter, r *http.Request, err error, back string) {
	switch {
	case errors.Is(err, cluster.ErrUnknownKind):
		h.refuse(w, r, http.StatusNotFound, err.Error(), back)
	default:
		h.clusterError(w, r, err)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func ofKind(kind string) string {
	if kind == "" {
		return ""
	}
	return " of kind " + kind
}

// bulkDetails says what a bulk action will do, for its confirmation.
func bulkDetails(name string, n int, all bool, sel cluster.Selection) []string {
	out := []string{consequence(name, int64(n))}
	if all && !sel.Before.IsZero() {
		out = append(out, "Only the tasks that were "+string(sel.State)+" at "+sel.Before.UTC().Format(absoluteLayout)+" UTC, when this page was made; any that arrive since are left alone.")
	}
	if name == "run now" {
		out = append(out, "Those already due are not moved (they run as soon as a worker is free); the result counts the others.")
	}
	return out
}

// bulkNames names the actions a listing of state offers, for a refusal.
func bulkNames(state cluster.State) string {
	var names []string
	for _, c := range bulkActionsFor(state) {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}
