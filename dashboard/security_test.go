package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/dashboard"
)

// The rules that keep the dashboard from being turned against its
// operators: messages only from the server, CSRF tokens bound to the
// visitor, cross-site POSTs refused, confirmations, refusals as errors.

// visitorClient is a browser of its own: its own cookies, no redirects
// followed.
func visitorClient() *http.Client {
	return &http.Client{Jar: newJar(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func queuedTask(t *testing.T, s *scheduler.Scheduler, name string) (scheduler.ScheduledFuture, string) {
	t.Helper()
	f, err := s.Schedule(idle, time.Hour, scheduler.WithName(name))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range s.PeekQueue(100) {
		if q.Name == name {
			return f, fmt.Sprint(q.ID)
		}
	}
	t.Fatalf("task %s not queued", name)
	return nil, ""
}

func TestTextInTheURLIsNeverShownAsTheDashboardsMessage(t *testing.T) {
	s := newScheduler(t)
	srv := serve(t, s)
	const phish = "Session expired: sign in again at evil.example"
	for _, q := range []string{"msg=" + url.QueryEscape(phish), "flash=" + url.QueryEscape("ok.99999999999."+phish+".00"), "flash=" + url.QueryEscape(phish)} {
		_, body := get(t, srv.URL+prefix+"/queue?"+q)
		if strings.Contains(body, "evil.example") || strings.Contains(body, `id="flash"`) {
			t.Errorf("?%s: the page shows text from the URL as its message", q)
		}
	}
}

func TestAFlashShowsOnlyToTheVisitorWhoActed(t *testing.T) {
	s := newScheduler(t)
	_, id := queuedTask(t, s, "victim")
	srv := serve(t, s)
	alice, mallory := visitorClient(), visitorClient()
	_, page := getWith(t, alice, srv.URL+prefix+"/queue")
	code, _, resp := postWith(t, alice, srv.URL+prefix+"/cancel", url.Values{"csrf": {csrfOf(t, page)}, "id": {id}, "confirmed": {"1"}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", code)
	}
	loc, err := resp.Location()
	if err != nil {
		t.Fatal(err)
	}
	if _, body := getWith(t, alice, loc.String()); !strings.Contains(body, "task "+id+" canceled") {
		t.Error("the visitor who acted does not see the flash")
	}
	if _, body := getWith(t, mallory, loc.String()); strings.Contains(body, "task "+id+" canceled") {
		t.Error("a flash link shows its message to another visitor")
	}
}

func TestTheCSRFTokenIsBoundToTheVisitorsCookie(t *testing.T) {
	s := newScheduler(t)
	f, id := queuedTask(t, s, "victim")
	srv := serve(t, s)
	alice, mallory := visitorClient(), visitorClient()
	_, alicePage := getWith(t, alice, srv.URL+prefix+"/queue")
	_, malloryPage := getWith(t, mallory, srv.URL+prefix+"/queue")
	aliceToken, malloryToken := csrfOf(t, alicePage), csrfOf(t, malloryPage)
	if aliceToken == malloryToken {
		t.Fatal("two visitors got the same CSRF token")
	}
	form := url.Values{"csrf": {malloryToken}, "id": {id}, "confirmed": {"1"}}
	if code, body, _ := postWith(t, alice, srv.URL+prefix+"/cancel", form, nil); code != http.StatusForbidden || !strings.Contains(body, "CSRF token") {
		t.Errorf("another visitor's token: %d, want 403", code)
	}
	noCookie := &http.Client{CheckRedirect: visitorClient().CheckRedirect}
	form.Set("csrf", aliceToken)
	if code, body, _ := postWith(t, noCookie, srv.URL+prefix+"/cancel", form, nil); code != http.StatusForbidden || !strings.Contains(body, "no visitor cookie") {
		t.Errorf("a token without its cookie: %d, want 403", code)
	}
	if f.IsCanceled() {
		t.Fatal("a refused POST canceled the task")
	}
	if code, _, _ := postWith(t, alice, srv.URL+prefix+"/cancel", form, nil); code != http.StatusSeeOther || !f.IsCanceled() {
		t.Errorf("the visitor's own token and cookie: %d, canceled %v; want 303 and canceled", code, f.IsCanceled())
	}
}

func TestAPostFromAnotherSiteIsRefusedEvenWithAValidToken(t *testing.T) {
	s := newScheduler(t)
	f, id := queuedTask(t, s, "victim")
	srv := serve(t, s)
	alice := visitorClient()
	_, page := getWith(t, alice, srv.URL+prefix+"/queue")
	form := url.Values{"csrf": {csrfOf(t, page)}, "id": {id}}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, h := range []map[string]string{
		{"Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"}, // a sibling subdomain is another site for the dashboard
		{"Sec-Fetch-Site": "cross-site", "Origin": srv.URL},
		{"Origin": "null"},
	} {
		code, body, _ := postWith(t, alice, srv.URL+prefix+"/cancel", form, h)
		if code != http.StatusForbidden || !strings.Contains(body, "another site") {
			t.Errorf("%v: %d, want 403 saying it comes from another site", h, code)
		}
	}
	if f.IsCanceled() {
		t.Fatal("a cross-site POST canceled the task")
	}
	// Same-origin requests, and those with neither header (not from a
	// current browser's page), pass this check and reach the confirmation.
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "same-origin"}, {"Origin": srv.URL}, {"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, nil} {
		if code, body, _ := postWith(t, alice, srv.URL+prefix+"/cancel", form, h); code != http.StatusOK || !strings.Contains(body, "Cancel task "+id) {
			t.Errorf("%v: %d, want the confirmation page", h, code)
		}
	}
}

func TestATrustedOriginMayPost(t *testing.T) {
	s := newScheduler(t)
	_, id := queuedTask(t, s, "victim")
	srv := serve(t, s, dashboard.WithTrustedOrigin("https://admin.example.com"))
	alice := visitorClient()
	_, page := getWith(t, alice, srv.URL+prefix+"/queue")
	form := url.Values{"csrf": {csrfOf(t, page)}, "id": {id}}
	if code, _, _ := postWith(t, alice, srv.URL+prefix+"/cancel", form, map[string]string{"Origin": "https://admin.example.com", "Sec-Fetch-Site": "cross-site"}); code != http.StatusOK {
		t.Errorf("trusted origin: %d, want the confirmation page", code)
	}
	if _, err := dashboard.New(s, dashboard.WithTrustedOrigin("admin.example.com/path")); err == nil {
		t.Error("a malformed trusted origin was accepted")
	}
}

func TestPreferencesAreOfferedValuesOnly(t *testing.T) {
	s := newScheduler(t)
	srv := serve(t, s)
	for _, q := range []string{"refresh=3", "refresh=x", "tz=Mars/Olympus", "tz=Local"} {
		if code, body := get(t, srv.URL+prefix+"/queue?"+q); code != http.StatusBadRequest || !strings.Contains(body, "flash-error") {
			t.Errorf("?%s: %d, want 400", q, code)
		}
	}
	c := visitorClient()
	_, body := getWith(t, c, srv.URL+prefix+"/queue?refresh=5&tz=Europe/Paris")
	mustContain(t, body, `<noscript><meta http-equiv="refresh" content="5"></noscript>`, `data-refresh="5"`, `<option value="Europe/Paris" selected>`)
	// The choice is kept for the next page, without the query.
	queuedTask(t, s, "later")
	_, body = getWith(t, c, srv.URL+prefix+"/queue")
	mustContain(t, body, `data-refresh="5"`, `<option value="Europe/Paris" selected>`)
	if !strings.Contains(body, " CET</time>") && !strings.Contains(body, " CEST</time>") {
		t.Error("times are not shown in the zone chosen")
	}
	_, body = getWith(t, c, srv.URL+prefix+"/?refresh=0")
	if strings.Contains(body, "http-equiv") {
		t.Error("refresh off still refreshes")
	}
}
