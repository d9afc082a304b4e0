package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/dashboard"
)

// The page an on-call engineer keeps open: it refreshes itself (with the
// script, keeping the scroll position; without it, by a meta refresh),
// pages through a long queue, and fits a phone-width window.

// narrowScreenshotEnv names a file the narrow-window test writes a PNG of
// the queue page at 420 px to (docs/dashboard-420.png was taken so).
const narrowScreenshotEnv = "DASHBOARD_SCREENSHOT_420"

// serveCounted mounts the dashboard of s under prefix and reports each GET
// of path on the channel it returns.
func serveCounted(t *testing.T, s *scheduler.Scheduler, path string, opts ...dashboard.Option) (string, <-chan struct{}) {
	t.Helper()
	h, err := dashboard.New(s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hits := make(chan struct{}, 1000)
	mux := http.NewServeMux()
	inner := http.StripPrefix(prefix, h)
	mux.Handle(prefix+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == prefix+path {
			select {
			case hits <- struct{}{}:
			default:
			}
		}
		inner.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + prefix, hits
}

// awaitHit waits for the next hit, failing the test if none comes within a
// bound far above a refresh interval (a bound, not a guess at a time).
func awaitHit(t *testing.T, hits <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-hits:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no request came", what)
	}
}

func drain(hits <-chan struct{}) {
	for {
		select {
		case <-hits:
		default:
			return
		}
	}
}

func scheduleNamed(t *testing.T, s *scheduler.Scheduler, n int, prefix string, after time.Duration) {
	t.Helper()
	for i := range n {
		if _, err := s.Schedule(idle, after+time.Duration(i)*time.Second, scheduler.WithName(fmt.Sprintf("%s-%03d", prefix, i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBrowserRefreshesTheQueueInPlaceKeepingTheScrollPosition(t *testing.T) {
	browser := newBrowser(t)
	s := newScheduler(t)
	scheduleNamed(t, s, 60, "report", time.Hour)
	base, hits := serveCounted(t, s, "/queue")
	if err := chromedp.Do(browser,
		chromedp.EmulateViewport(1400, 400),
		chromedp.Navigate(base+"/queue"),
		chromedp.WaitVisible(chromedp.CSS("#queued")),
	); err != nil {
		t.Fatal(err)
	}
	// The switch: choosing "every 2 s" applies at once (the script submits
	// the switch's GET form) and is kept in a cookie.
	if _, err := chromedp.Run(browser, chromedp.Evaluate[bool](`(() => { const r = document.getElementById("refresh"); r.value = "2"; r.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.CSS(`body[data-refresh="2"] #queued`))); err != nil {
		t.Fatalf("the refresh switch: %v", err)
	}
	// Scroll down and mark the document: a refresh in place keeps both.
	if _, err := chromedp.Run(browser, chromedp.Evaluate[bool](`window.scrollTo(0, 300); window.sameDocument = true; true`)); err != nil {
		t.Fatal(err)
	}
	drain(hits)
	if _, err := s.Schedule(idle, time.Minute, scheduler.WithName("fresh-task")); err != nil {
		t.Fatal(err)
	}
	awaitHit(t, hits, "the script's refresh")
	if _, err := chromedp.Run(browser, chromedp.Poll[bool](`Array.from(document.querySelectorAll("#queued td.name")).some(td => td.textContent === "fresh-task")`)); err != nil {
		t.Fatalf("the new task never showed: %v", err)
	}
	state, err := chromedp.Run(browser, chromedp.Evaluate[[]any](`[window.sameDocument === true, window.scrollY]`))
	if err != nil {
		t.Fatal(err)
	}
	if state[0] != true || state[1] != float64(300) {
		t.Errorf("after the refresh: same document %v, scrollY %v; want true, 300", state[0], state[1])
	}
	// The cookie keeps the choice for a page opened without the query.
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#stat-queued"))); err != nil {
		t.Fatal(err)
	}
	if v, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.getElementById("refresh").value`)); err != nil || v != "2" {
		t.Errorf("the overview's refresh switch says %q (%v), want 2", v, err)
	}
}

func TestBrowserWithoutJavaScriptRefreshesByMetaRefresh(t *testing.T) {
	browser := newBrowser(t)
	s := newScheduler(t)
	scheduleNamed(t, s, 3, "report", time.Hour)
	base, hits := serveCounted(t, s, "/queue")
	if err := chromedp.Do(browser,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}),
		chromedp.Navigate(base+"/queue?refresh=2"),
		chromedp.WaitVisible(chromedp.CSS("#queued")),
	); err != nil {
		t.Fatal(err)
	}
	awaitHit(t, hits, "the first load")
	awaitHit(t, hits, "the meta refresh")
	awaitHit(t, hits, "the second meta refresh")
}

func TestBrowserPagesPastTheFirstHundredQueuedTasks(t *testing.T) {
	browser := newBrowser(t)
	s := newScheduler(t)
	scheduleNamed(t, s, 250, "job", time.Hour)
	base, _ := serveCounted(t, s, "/queue")
	head := s.PeekQueue(250)
	want := func(from, to int) []string {
		var ids []string
		for _, q := range head[from:to] {
			ids = append(ids, fmt.Sprintf("task-%d", q.ID))
		}
		return ids
	}
	rows := func() []string {
		t.Helper()
		ids, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#queued tbody tr")).map(r => r.id)`))
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/queue"), chromedp.WaitVisible(chromedp.CSS("#next-page"))); err != nil {
		t.Fatal(err)
	}
	if got := rows(); !slices.Equal(got, want(0, 100)) {
		t.Errorf("page 1: %d rows, want the first 100 of PeekQueue", len(got))
	}
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("#next-page")), chromedp.WaitVisible(chromedp.CSS("#prev-page"))); err != nil {
		t.Fatal(err)
	}
	if got := rows(); !slices.Equal(got, want(100, 200)) {
		t.Errorf("page 2: %d rows, want PeekQueue's 101st to 200th", len(got))
	}
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("#next-page")), chromedp.WaitVisible(chromedp.CSS("#prev-page"))); err != nil {
		t.Fatal(err)
	}
	if got := rows(); !slices.Equal(got, want(200, 250)) {
		t.Errorf("page 3: %d rows, want the last 50", len(got))
	}
	if n, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll("#next-page").length`)); err != nil || n != 0 {
		t.Errorf("the last page links to a next one (%v)", err)
	}
	// A larger page on request, and the search by name.
	if err := chromedp.Do(browser, chromedp.Navigate(base+"/queue?limit=250"), chromedp.WaitVisible(chromedp.CSS("#queued"))); err != nil {
		t.Fatal(err)
	}
	if got := rows(); !slices.Equal(got, want(0, 250)) {
		t.Errorf("limit=250: %d rows, want all 250", len(got))
	}
	if err := chromedp.Do(browser,
		chromedp.SendKeys(chromedp.CSS("#queue-search"), "job-24"),
		chromedp.Submit(chromedp.CSS("#queue-search")),
		chromedp.WaitVisible(chromedp.CSS("#every-task")),
	); err != nil {
		t.Fatal(err)
	}
	names, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#queued td.name")).map(td => td.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"job-240", "job-241", "job-242", "job-243", "job-244", "job-245", "job-246", "job-247", "job-248", "job-249"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("search job-24 found %v, want %v", names, wantNames)
	}
}

func TestBrowserAPhoneWidthWindowGetsAReadableList(t *testing.T) {
	browser := newBrowser(t)
	s := newScheduler(t)
	scheduleNamed(t, s, 12, "a-task-with-a-rather-long-name-for-a-phone", time.Hour)
	if _, err := s.ScheduleAtFixedRate(idle, time.Hour, 90*time.Minute, scheduler.WithName("rate")); err != nil {
		t.Fatal(err)
	}
	base, _ := serveCounted(t, s, "/queue")
	for _, page := range []string{"/", "/queue"} {
		if err := chromedp.Do(browser,
			chromedp.EmulateViewport(420, 900, chromedp.EmulateMobile),
			chromedp.Navigate(base+page),
			chromedp.WaitVisible(chromedp.CSS("main")),
		); err != nil {
			t.Fatal(err)
		}
		wide, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if wide > 420 {
			t.Errorf("%s at 420 px is %d px wide: it scrolls sideways", page, wide)
		}
	}
	// The queue's rows are cards of labelled fields, not a squeezed table.
	layout, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`(() => {
		const td = document.querySelector("#queued tbody td[data-label=Due]");
		return [getComputedStyle(td).display, getComputedStyle(td, "::before").content, getComputedStyle(document.querySelector("#queued thead")).display];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(layout, []string{"block", `"Due"`, "none"}) {
		t.Errorf("a queue cell at 420 px: display, label, header display = %q; want block, \"Due\", none", layout)
	}
	screenshotTo(t, browser, narrowScreenshotEnv)
}
