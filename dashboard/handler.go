package dashboard

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// historyWindow is how far back the charts look: the most RunHistory keeps.
const historyWindow = 5 * time.Minute

// defaultQueueLimit is how many queued tasks the queue page shows unless
// WithQueueLimit says otherwise.
const defaultQueueLimit = 100

// defaultPageSize is how many tasks a page of a cluster listing shows
// unless WithPageSize says otherwise.
const defaultPageSize = 50

// Handler serves the dashboard of one Scheduler, of a cluster (WithCluster)
// or of both. Make it with New.
type Handler struct {
	s     *scheduler.Scheduler // nil for a dashboard of a cluster alone
	cfg   config
	csrf  csrfToken
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// schedulerPages and clusterPages name the templates of each half; each is
// parsed together with layout.html.
var (
	schedulerPages = []string{"overview", "queue"}
	clusterPages   = []string{"cluster", "cluster_tasks", "cluster_task", "cluster_nodes", "cluster_periodic", "error"}
)

// New returns the dashboard of s. It switches s's run history on
// (Scheduler.RunHistory) at once, so the charts cover the time since
// mounting whether or not anyone looks. With WithCluster, s may be nil:
// the dashboard then serves the cluster pages alone, from its root. It
// returns an error wrapping ErrInvalidArgument if s is nil without
// WithCluster, or an option is nil or invalid.
func New(s *scheduler.Scheduler, opts ...Option) (*Handler, error) {
	cfg := config{queueLimit: defaultQueueLimit, pageSize: defaultPageSize}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d: is nil", ErrInvalidArgument, i)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if s == nil && cfg.node == nil {
		return nil, fmt.Errorf("%w: scheduler: is nil (a dashboard of a cluster alone needs WithCluster)", ErrInvalidArgument)
	}
	token, err := newCSRFToken()
	if err != nil {
		return nil, err
	}
	h := &Handler{s: s, cfg: cfg, csrf: token, pages: map[string]*template.Template{}}
	var names []string
	if s != nil {
		names = append(names, schedulerPages...)
	}
	if cfg.node != nil {
		names = append(names, clusterPages...)
	}
	for _, name := range names {
		t, err := template.New("layout.html").Funcs(templateFuncs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		h.pages[name] = t
	}
	h.mux = http.NewServeMux()
	if s != nil {
		s.RunHistory(time.Second) // the first call starts the recording
		h.mux.HandleFunc("GET /{$}", h.overview)
		h.mux.HandleFunc("GET /queue", h.queue)
		h.mux.HandleFunc("POST /cancel", h.cancel)
	} else {
		// A relative Location keeps the prefix the handler is mounted under.
		h.mux.Handle("GET /{$}", relativeRedirect("cluster"))
	}
	if cfg.node != nil {
		h.routeCluster()
	}
	h.mux.Handle("GET /static/", http.FileServerFS(staticFiles))
	return h, nil
}

// ServeHTTP serves the pages, paths relative to where the handler is
// mounted (use http.StripPrefix).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
	h.mux.ServeHTTP(w, r)
}

// page is what every template gets: the page's own data and what the
// layout needs.
type page struct {
	Title string
	Nav   string
	// Root leads from the page back to where the handler is mounted: ""
	// for a page at the top, "../" for one a level down.
	Root         string
	ReadOnly     bool
	CSRF         string
	Message      string
	HasScheduler bool
	HasCluster   bool
	Data         any
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, name, title string, data any, message string) {
	h.renderStatus(w, r, http.StatusOK, name, title, data, message)
}

// renderStatus renders page name with the status code.
func (h *Handler) renderStatus(w http.ResponseWriter, r *http.Request, code int, name, title string, data any, message string) {
	p := page{Title: title, Nav: name, Root: strings.Repeat("../", max(0, strings.Count(r.URL.Path, "/")-1)),
		ReadOnly: h.cfg.readOnly, CSRF: h.csrf.String(), Message: message,
		HasScheduler: h.s != nil, HasCluster: h.cfg.node != nil, Data: data}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := h.pages[name].Execute(w, p); err != nil {
		// The header is sent already; all that is left is to stop.
		return
	}
}

// overviewData is the overview page: the counters and the charts.
type overviewData struct {
	Stats   scheduler.Stats
	History scheduler.RunHistory
	Runs    chart
	Late    chart
	Failed  chart
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
	h.render(w, r, "overview", "Overview", d, "")
}

// queueData is the queue page: the head of the queue and the runs in
// progress.
type queueData struct {
	Limit   int
	Queued  []queuedRow
	Running []runningRow
	Total   int
}

type queuedRow struct {
	ID       scheduler.TaskID
	Name     string
	Kind     string
	Due      time.Time
	In       time.Duration
	Every    string
	Canceled bool
}

type runningRow struct {
	Name    string
	Due     time.Time
	Started time.Time
	Late    time.Duration
}

func (h *Handler) queue(w http.ResponseWriter, r *http.Request) {
	limit := h.cfg.queueLimit
	if q := r.URL.Query().Get("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 {
			http.Error(w, fmt.Sprintf("dashboard: limit %q: must be a positive whole number", q), http.StatusBadRequest)
			return
		}
		limit = min(n, h.cfg.queueLimit)
	}
	d := queueData{Limit: limit, Total: h.s.Stats().Queued}
	for _, t := range h.s.PeekQueue(limit) {
		row := queuedRow{ID: t.ID, Name: t.Name, Kind: t.Kind.String(), Due: t.Due, In: t.Future.Delay(), Canceled: t.Canceled}
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
	h.render(w, r, "queue", "Queue", d, r.URL.Query().Get("msg"))
}

// cancel cancels one queued task by ID (Cancel(false): a run in progress
// is left to finish) and sends the browser back to the queue page.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	if !h.allowAction(w, r) {
		return
	}
	raw := r.PostFormValue("id")
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		http.Error(w, fmt.Sprintf("dashboard: task id %q: not a task id", raw), http.StatusBadRequest)
		return
	}
	msg := fmt.Sprintf("task %d is no longer queued", id)
	if f, ok := h.s.TaskByID(scheduler.TaskID(id)); ok {
		if f.Cancel(false) {
			msg = fmt.Sprintf("task %d canceled", id)
		} else {
			msg = fmt.Sprintf("task %d was already done", id)
		}
	}
	seeOther(w, "queue?msg="+urlQueryEscape(msg))
}

// seeOther sends the browser to location, relative to the page that was
// asked for: a relative Location keeps the prefix the handler is mounted
// under, which http.Redirect would lose after http.StripPrefix.
func seeOther(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// relativeRedirect answers every request with a 303 to location, relative
// as seeOther's.
func relativeRedirect(location string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { seeOther(w, location) })
}

// allowAction answers 403 for a read-only dashboard or a request without
// the page's CSRF token, and reports whether the action may go on.
func (h *Handler) allowAction(w http.ResponseWriter, r *http.Request) bool {
	if h.cfg.readOnly {
		http.Error(w, "dashboard: action: the dashboard is read-only", http.StatusForbidden)
		return false
	}
	if !h.csrf.matches(r.PostFormValue("csrf")) {
		http.Error(w, "dashboard: action: missing or wrong CSRF token (reload the page)", http.StatusForbidden)
		return false
	}
	return true
}
