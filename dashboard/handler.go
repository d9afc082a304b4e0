package dashboard

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
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

// defaultPageSize is how many tasks a page of a cluster listing shows
// unless WithPageSize or a ?limit= says otherwise.
const defaultPageSize = 50

// Handler serves the dashboard of one Scheduler, of a cluster (WithCluster)
// or of both. Make it with New.
type Handler struct {
	s       *scheduler.Scheduler // nil for a dashboard of a cluster alone
	cfg     config
	key     secretKey // signs CSRF tokens and flash messages
	origins *http.CrossOriginProtection
	pages   map[string]*template.Template
	mux     *http.ServeMux
}

// schedulerPages, clusterPages and commonPages name the templates of each
// half and of both; each is parsed together with layout.html.
var (
	schedulerPages = []string{"overview", "queue"}
	clusterPages   = []string{"cluster", "cluster_tasks", "cluster_task", "cluster_nodes", "cluster_periodic"}
	commonPages    = []string{"error", "confirm"}
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
	key, err := newSecretKey()
	if err != nil {
		return nil, err
	}
	h := &Handler{s: s, cfg: cfg, key: key, origins: http.NewCrossOriginProtection(), pages: map[string]*template.Template{}}
	for _, o := range cfg.trustedOrigins {
		if err := h.origins.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("%w: trusted origin %q: %v", ErrInvalidArgument, o, err)
		}
	}
	names := slices.Clone(commonPages)
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
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
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
	Flash        *flash
	HasScheduler bool
	HasCluster   bool
	// Live pages refresh themselves every Refresh seconds (0: never);
	// confirmation and error pages are not live.
	Live    bool
	Refresh int
	Zone    *time.Location
	Now     time.Time
	// Keep is the page's query without the preferences and the flash,
	// for the switches' forms, which must stay on the same listing.
	Keep url.Values
	// Bulk: listings show the checkboxes and the bulk actions' form.
	Bulk bool
	Data any
}

// RefreshChoices are the refresh switch's options.
func (p *page) RefreshChoices() []int { return refreshChoices }

// ZoneName is the zone times are shown in.
func (p *page) ZoneName() string { return p.Zone.String() }

// render renders page name with code; a live page follows the visitor's
// refresh choice.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, code int, name, title string, data any) {
	h.renderPage(w, r, code, name, title, data, nil, name != "error" && name != "confirm")
}

func (h *Handler) renderPage(w http.ResponseWriter, r *http.Request, code int, name, title string, data any, fl *flash, live bool) {
	v := visitor(w, r)
	pr, err := readPrefs(w, r)
	if err != nil {
		// The refusal of a bad preference is rendered with the defaults.
		code, name, title, data, fl, live = http.StatusBadRequest, "error", "Error", "", &flash{Level: flashError, Text: err.Error()}, false
	}
	if fl == nil {
		if f, ok := h.openFlash(v, r.URL.Query().Get("flash"), time.Now()); ok {
			fl = &f
		}
	}
	keep := url.Values{}
	for k, vs := range r.URL.Query() {
		if k != "refresh" && k != "tz" && k != "flash" && k != "msg" {
			keep[k] = vs
		}
	}
	p := &page{Title: title, Nav: name, Root: strings.Repeat("../", max(0, strings.Count(r.URL.Path, "/")-1)),
		ReadOnly: h.cfg.readOnly, CSRF: h.key.csrfToken(v), Flash: fl,
		HasScheduler: h.s != nil, HasCluster: h.cfg.node != nil,
		Bulk: h.cfg.node != nil && !h.cfg.readOnly, Live: live, Refresh: pr.Refresh, Zone: pr.Zone, Now: time.Now(), Keep: keep, Data: data}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := h.pages[name].Execute(w, p); err != nil {
		// The header is sent already; all that is left is to stop.
		return
	}
}

// errorData is the error page: a link back, if there is a page to go
// back to.
type errorData struct {
	Back string
}

// refuse renders the error page with code and why as an error flash, and
// a link to back ("" for none).
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, code int, why, back string) {
	title := "Refused"
	if code >= 500 {
		title = "Error"
	}
	h.renderPage(w, r, code, "error", title, errorData{Back: back}, &flash{Level: flashError, Text: why}, false)
}

// done sends the browser to location (relative, see seeOther) with a
// success flash of text.
func (h *Handler) done(w http.ResponseWriter, r *http.Request, location, text string) {
	seeOther(w, h.withFlash(location, visitor(w, r), flashOK, text))
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

// allowAction refuses (403, on the error page) an action of a read-only
// dashboard or a POST that fails the CSRF checks (checkPost), and reports
// whether the action may go on.
func (h *Handler) allowAction(w http.ResponseWriter, r *http.Request) bool {
	if h.cfg.readOnly {
		h.refuse(w, r, http.StatusForbidden, "dashboard: action: the dashboard is read-only", "")
		return false
	}
	if why := h.checkPost(r); why != "" {
		h.refuse(w, r, http.StatusForbidden, "dashboard: action: "+why, "")
		return false
	}
	return true
}
