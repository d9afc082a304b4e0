package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/go-stpe/scheduler/dashboard"
)

func TestQueuePageListsQueuedTasksInDueOrderWithKindAndPeriod(t *testing.T) {
	s := newScheduler(t)
	_, err := s.Schedule(idle, 2*time.Hour, scheduler.WithName("later"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ScheduleAtFixedRate(idle, time.Hour, 90*time.Minute, scheduler.WithName("rate"))
	if err != nil {
		t.Fatal(err)
	}
	nightly, err := cron.Parse("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScheduleWithTrigger(idle, nightly, scheduler.WithName("nightly")); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, s)

	code, body := get(t, srv.URL+prefix+"/queue")
	if code != http.StatusOK {
		t.Fatalf("GET queue: %d", code)
	}
	mustContain(t, body, ">later<", ">rate<", ">nightly<", "one-shot", "fixed rate", "trigger", "1h30m0s", "0 3 * * *")
	if strings.Index(body, ">rate<") > strings.Index(body, ">later<") {
		t.Error("the fixed-rate task due in 1h is listed after the one-shot due in 2h")
	}
	for _, q := range s.PeekQueue(10) {
		mustContain(t, body, fmt.Sprintf(`id="task-%d"`, q.ID))
	}
}

func TestQueuePageShowsAtMostLimitTasks(t *testing.T) {
	s := newScheduler(t)
	for i := range 20 {
		if _, err := s.Schedule(idle, time.Hour+time.Duration(i)*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	srv := serve(t, s, dashboard.WithQueueLimit(5))
	_, body := get(t, srv.URL+prefix+"/queue?limit=3")
	mustContain(t, body, `<span id="shown">3</span>`, `<span id="total">20</span>`)
	_, body = get(t, srv.URL+prefix+"/queue")
	mustContain(t, body, `<span id="shown">5</span>`, `<span id="total">20</span>`)
	for _, limit := range []string{"-1", "0", "6", "x"} {
		code, body := get(t, srv.URL+prefix+"/queue?limit="+limit)
		if code != http.StatusBadRequest || !strings.Contains(body, "must be a whole number from 1 to 5") || !strings.Contains(body, `class="flash flash-error"`) {
			t.Errorf("limit=%s: %d %q, want 400 saying the most", limit, code, body)
		}
	}
}

func TestEveryNameIsEscaped(t *testing.T) {
	s := newScheduler(t)
	const evil = `<script>alert("x")</script>`
	if _, err := s.Schedule(idle, time.Hour, scheduler.WithName(evil)); err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	started := make(chan struct{})
	if _, err := s.Schedule(func(ctx context.Context) error { close(started); <-block; return nil }, 0, scheduler.WithName(evil+"-running")); err != nil {
		t.Fatal(err)
	}
	defer close(block)
	<-started
	srv := serve(t, s)
	_, body := get(t, srv.URL+prefix+"/queue?msg="+url.QueryEscape(evil))
	if strings.Contains(body, "<script>") {
		t.Fatalf("a raw <script> reached the page:\n%s", body)
	}
	mustContain(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;-running")
}

func TestCancelWithTheTokenCancelsTheTaskAndReturnsToTheQueueUnderThePrefix(t *testing.T) {
	s := newScheduler(t)
	f, err := s.Schedule(idle, time.Hour, scheduler.WithName("victim"))
	if err != nil {
		t.Fatal(err)
	}
	id := s.PeekQueue(1)[0].ID
	srv := serve(t, s)
	_, body := get(t, srv.URL+prefix+"/queue")
	token := csrfOf(t, body)
	mustContain(t, body, `action="cancel"`)

	// The button asks first: a page naming the task, and nothing done.
	code, body := postBody(t, srv.URL+prefix+"/cancel", url.Values{"csrf": {token}, "id": {fmt.Sprint(id)}})
	if code != http.StatusOK || f.IsCanceled() {
		t.Fatalf("POST cancel without confirmation: %d, canceled %v; want the confirmation page and nothing done", code, f.IsCanceled())
	}
	mustContain(t, body, fmt.Sprintf("Cancel task %d, victim?", id), `name="confirmed" value="1"`)
	resp := post(t, srv.URL+prefix+"/cancel", url.Values{"csrf": {token}, "id": {fmt.Sprint(id)}, "confirmed": {"1"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST cancel: %d, want 303", resp.StatusCode)
	}
	loc, err := resp.Location()
	if err != nil {
		t.Fatal(err)
	}
	if loc.Path != prefix+"/queue" {
		t.Errorf("redirect to %s, want %s/queue", loc.Path, prefix)
	}
	if !f.IsCanceled() {
		t.Error("the task is not canceled")
	}
	_, body = get(t, loc.String())
	mustContain(t, body, `class="flash flash-ok"`, fmt.Sprintf("task %d canceled", id))

	// Again: refused as an error, with a status that says why, not a
	// success banner.
	code, body = postBody(t, srv.URL+prefix+"/cancel", url.Values{"csrf": {token}, "id": {fmt.Sprint(id)}, "confirmed": {"1"}})
	if code != http.StatusNotFound && code != http.StatusConflict {
		t.Errorf("second cancel: %d, want 404 or 409", code)
	}
	mustContain(t, body, `class="flash flash-error"`, fmt.Sprintf("cancel task %d", id))
}

func TestCancelWithoutTheRightTokenIsForbidden(t *testing.T) {
	s := newScheduler(t)
	f, err := s.Schedule(idle, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(s.PeekQueue(1)[0].ID)
	srv := serve(t, s)
	for _, token := range []string{"", "00", strings.Repeat("0", 64)} {
		if resp := post(t, srv.URL+prefix+"/cancel", url.Values{"csrf": {token}, "id": {id}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("token %q: %d, want 403", token, resp.StatusCode)
		}
	}
	if code, _ := get(t, srv.URL+prefix+"/cancel?id="+id); code != http.StatusMethodNotAllowed {
		t.Errorf("GET cancel: %d, want 405", code)
	}
	if f.IsCanceled() {
		t.Error("the task was canceled without the token")
	}
}

func TestCancelOfABadIDSaysWhy(t *testing.T) {
	s := newScheduler(t)
	if _, err := s.Schedule(idle, time.Hour); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, s)
	_, body := get(t, srv.URL+prefix+"/queue")
	token := csrfOf(t, body)
	resp, err := noRedirect.PostForm(srv.URL+prefix+"/cancel", url.Values{"csrf": {token}, "id": {"not-a-number"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), `dashboard: task id &#34;not-a-number&#34;`) {
		t.Errorf("bad id: %d %q, want 400 naming the id", resp.StatusCode, msg)
	}
}

func TestReadOnlyShowsNoButtonAndRefusesActions(t *testing.T) {
	s := newScheduler(t)
	f, err := s.Schedule(idle, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(s.PeekQueue(1)[0].ID)
	srv := serve(t, s, dashboard.ReadOnly())
	_, body := get(t, srv.URL+prefix+"/queue")
	if strings.Contains(body, `method="post"`) {
		t.Error("a read-only queue page has an action form")
	}
	mustContain(t, body, "read-only", `id="task-`+id+`"`)
	if resp := post(t, srv.URL+prefix+"/cancel", url.Values{"id": {id}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST cancel on a read-only dashboard: %d, want 403", resp.StatusCode)
	}
	if f.IsCanceled() {
		t.Error("a read-only dashboard canceled a task")
	}
}

func TestOverviewCountsRunsAndFailures(t *testing.T) {
	s := newScheduler(t)
	srv := serve(t, s) // mounting switches the run history on
	ok, err := s.Schedule(idle, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := s.Schedule(func(context.Context) error { return errors.New("boom") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = ok.Wait(context.Background())
	_ = bad.Wait(context.Background())
	// A run is counted just after its future is done: once the scheduler
	// has terminated, both runs are in the counters.
	s.Shutdown()
	if err := s.AwaitTermination(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := s.Stats()
	hist := s.RunHistory(5 * time.Minute)

	code, body := get(t, srv.URL+prefix+"/")
	if code != http.StatusOK {
		t.Fatalf("GET overview: %d", code)
	}
	mustContain(t, body,
		fmt.Sprintf(`id="stat-completed">%d<`, want.Completed),
		fmt.Sprintf(`id="stat-failed">%d<`, want.Failed),
		fmt.Sprintf(`<span id="hist-runs">%d</span>`, hist.Runs),
		fmt.Sprintf(`<span id="hist-failed">%d</span>`, hist.Failed),
		"<svg", "<polyline", `href="static/style.css"`, `href="queue"`)
	if hist.Runs < 2 || hist.Failed < 1 {
		t.Errorf("history %d runs %d failed, want the 2 runs and 1 failure since mounting", hist.Runs, hist.Failed)
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		t.Error("the page refers to another host")
	}
}

func TestStyleSheetIsServedFromTheEmbeddedFiles(t *testing.T) {
	srv := serve(t, newScheduler(t))
	code, body := get(t, srv.URL+prefix+"/static/style.css")
	if code != http.StatusOK || !strings.Contains(body, "polyline") {
		t.Errorf("GET static/style.css: %d %.40q", code, body)
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	s := newScheduler(t)
	for name, call := range map[string]func() error{
		"nil scheduler": func() error { _, err := dashboard.New(nil); return err },
		"nil option":    func() error { _, err := dashboard.New(s, nil); return err },
		"limit 0":       func() error { _, err := dashboard.New(s, dashboard.WithQueueLimit(0)); return err },
		"limit 10001":   func() error { _, err := dashboard.New(s, dashboard.WithQueueLimit(10_001)); return err },
		"bad origin":    func() error { _, err := dashboard.New(s, dashboard.WithTrustedOrigin("not an origin")); return err },
	} {
		if err := call(); !errors.Is(err, dashboard.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}
