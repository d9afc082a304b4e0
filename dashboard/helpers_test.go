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

func get(t testing.TB, u string) (int, string) {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func post(t testing.TB, u string, form url.Values) *http.Response {
	t.Helper()
	resp, err := noRedirect.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// postBody posts form and returns the status and the page, redirects not
// followed.
func postBody(t testing.TB, u string, form url.Values) (int, string) {
	t.Helper()
	resp, err := noRedirect.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
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
