package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/dashboard"
)

// prefix is where the tests mount the dashboard, as a service would.
const prefix = "/debug/scheduler"

// newScheduler returns a Scheduler stopped when the test ends.
func newScheduler(t testing.TB) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Stop(ctx) // dropped one-shot tasks are expected here
	})
	return s
}

// serve mounts the dashboard of s under prefix on a test server.
func serve(t testing.TB, s *scheduler.Scheduler, opts ...dashboard.Option) *httptest.Server {
	t.Helper()
	return serveHandler(t, s, opts...)
}

// serveBoth mounts the dashboard of s (nil for none) and node under prefix
// on a test server and returns the prefix's URL.
func serveBoth(t testing.TB, s *scheduler.Scheduler, node *cluster.Node, opts ...dashboard.Option) string {
	t.Helper()
	return serveHandler(t, s, append(opts, dashboard.WithCluster(node))...).URL + prefix
}

func serveHandler(t testing.TB, s *scheduler.Scheduler, opts ...dashboard.Option) *httptest.Server {
	t.Helper()
	h, err := dashboard.New(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// noRedirect is a client that returns redirects instead of following them.
// It keeps cookies, as a browser does: the visitor cookie its first page
// gets is what the forms' CSRF tokens are bound to.
var noRedirect = &http.Client{Jar: newJar(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func newJar() http.CookieJar {
	jar, err := cookiejar.New(nil)
	if err != nil {
		panic(err)
	}
	return jar
}

// do sends req with c and returns the status, the page and the response
// (its body read and closed).
func do(t testing.TB, c *http.Client, req *http.Request) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp
}

// getWith gets u with c and returns the status and the page.
func getWith(t testing.TB, c *http.Client, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, body, _ := do(t, c, req)
	return code, body
}

// postWith posts form with c and the extra headers.
func postWith(t testing.TB, c *http.Client, u string, form url.Values, headers map[string]string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(t, c, req)
}

func get(t testing.TB, u string) (int, string) {
	t.Helper()
	return getWith(t, noRedirect, u)
}

func post(t testing.TB, u string, form url.Values) *http.Response {
	t.Helper()
	_, _, resp := postWith(t, noRedirect, u, form, nil)
	return resp
}

// postBody posts form and returns the status and the page, redirects not
// followed.
func postBody(t testing.TB, u string, form url.Values) (int, string) {
	t.Helper()
	code, body, _ := postWith(t, noRedirect, u, form, nil)
	return code, body
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrfOf returns the CSRF token of a page's forms.
func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", body)
	}
	return m[1]
}

func mustContain(t testing.TB, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

func idle(context.Context) error { return nil }
