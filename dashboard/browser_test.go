package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
)

// requireBrowserEnv, set to 1 (CI sets it), turns a missing Chromium from a
// skip into a failure.
const requireBrowserEnv = "SCHEDULER_REQUIRE_BROWSER"

// screenshotEnv names a file the browser test writes a PNG of the overview
// to (the one in docs/dashboard.png was taken so).
const screenshotEnv = "DASHBOARD_SCREENSHOT"

// chromiumPath finds the system's Chromium (Debian's chromium package); no
// browser is ever downloaded.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH: install it with `apt-get install -y chromium` to run the browser tests"
	if os.Getenv(requireBrowserEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile, told not to
// reach any outside host, and stops it when the test ends. A browser that
// exits before it listens (it happened once in fifteen starts on a
// machine loaded by several test suites at once) is started once more,
// with a new profile; a second failure fails the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	ctx, err := startBrowser(t, path)
	if err != nil {
		t.Logf("starting %s: %v; trying once more", path, err)
		ctx, err = startBrowser(t, path)
	}
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// textOf returns the trimmed text of the element sel selects.
func textOf(t *testing.T, browser context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(v)
}

// screenshotTo writes a PNG of the whole page to the file the environment
// variable env names, if it names one.
func screenshotTo(t *testing.T, browser context.Context, env string) {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		return
	}
	png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// startBrowser starts one Chromium, closed when the test ends.
func startBrowser(t *testing.T, path string) (context.Context, error) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// /dev/shm may be small or shared with other tests: use /tmp.
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1400, 900),
	}
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 60*time.Second)
	alloc, cancelAlloc := chromedp.NewExecAllocator(deadline, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		// Cancel closes the browser and waits for its process to exit.
		if err := chromedp.Cancel(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("closing the browser: %v", err)
		}
		cancelCtx()
		cancelAlloc()
		cancelDeadline()
	})
	return ctx, chromedp.Do(ctx)
}

func TestBrowserShowsTheSchedulerAndCancelsATask(t *testing.T) {
	browser := newBrowser(t)
	s := newScheduler(t)
	const evil = `<script>window.pwned = 1</script>`
	if _, err := s.ScheduleAtFixedRate(idle, 0, 20*time.Millisecond, scheduler.WithName("heartbeat")); err != nil {
		t.Fatal(err)
	}
	nightly, err := cron.Parse("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScheduleWithTrigger(idle, nightly, scheduler.WithName("nightly report")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScheduleWithFixedDelay(idle, time.Hour, time.Minute, scheduler.WithName("cleanup")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Schedule(idle, 2*time.Hour, scheduler.WithName(evil)); err != nil {
		t.Fatal(err)
	}
	victim, err := s.Schedule(idle, 3*time.Hour, scheduler.WithName("victim"))
	if err != nil {
		t.Fatal(err)
	}
	var victimID scheduler.TaskID
	for _, q := range s.PeekQueue(10) {
		if q.Name == "victim" {
			victimID = q.ID
		}
	}
	// Two failures, one a panic: the overview names them.
	srv := serve(t, s) // switches the run history on
	for _, body := range []func(context.Context) error{
		func(context.Context) error { return errors.New("upstream timed out after 30s") },
		func(context.Context) error { panic("index out of range [3] with length 3") },
	} {
		want := len(s.RunHistory(time.Second).Failures) + 1
		name := map[bool]string{true: "sync-invoices", false: "resize-images"}[want == 1]
		f, err := s.Schedule(body, 0, scheduler.WithName(name))
		if err != nil {
			t.Fatal(err)
		}
		<-f.Done()
		for len(s.RunHistory(time.Second).Failures) < want {
			runtime.Gosched() // the run is recorded right after its future completes
		}
	}
	base := srv.URL + prefix + "/"

	// The overview: the counters agree with Stats and the charts are drawn.
	if err := chromedp.Do(browser,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS("#stat-completed")),
	); err != nil {
		t.Fatalf("overview: %v", err)
	}
	completed, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#stat-completed")))
	if err != nil {
		t.Fatal(err)
	}
	var shown uint64
	if _, err := fmt.Sscan(completed, &shown); err != nil || shown > s.Stats().Completed {
		t.Errorf("overview shows %q completed runs; Stats says %d now", completed, s.Stats().Completed)
	}
	polylines, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll("svg polyline").length`))
	if err != nil {
		t.Fatal(err)
	}
	if polylines != 4 {
		t.Errorf("overview draws %d chart lines, want 4 (runs, p50, p99, failed)", polylines)
	}
	failed, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#failed-runs tbody tr")).map(r => r.querySelector(".name").textContent + ": " + r.querySelector(".error").textContent + (r.querySelector("pre.stack") ? " +stack" : ""))`))
	if err != nil {
		t.Fatal(err)
	}
	var sawPanic, sawError bool
	for _, f := range failed {
		sawPanic = sawPanic || (strings.Contains(f, "resize-images: scheduler: task panicked: index out of range") && strings.HasSuffix(f, "+stack"))
		sawError = sawError || strings.HasSuffix(f, "sync-invoices: upstream timed out after 30s")
	}
	if !sawPanic || !sawError {
		t.Errorf("recent failures %q, want the panic with its stack and the error", failed)
	}

	// The queue: the rows are the queue's head, the evil name is text.
	if err := chromedp.Do(browser,
		chromedp.Click(chromedp.CSS(`a[href="queue"]`)),
		chromedp.WaitVisible(chromedp.CSS("#queued")),
	); err != nil {
		t.Fatalf("queue: %v", err)
	}
	ids, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#queued tbody tr")).map(r => r.id)`))
	if err != nil {
		t.Fatal(err)
	}
	evilText, err := chromedp.Run(browser, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#queued td.name")).map(td => td.textContent).find(s => s.includes("pwned")) || ""`))
	if err != nil {
		t.Fatal(err)
	}
	pwned, err := chromedp.Run(browser, chromedp.Evaluate[string](`typeof window.pwned`))
	if err != nil {
		t.Fatal(err)
	}
	if evilText != evil {
		t.Errorf("the task named %q shows as %q", evil, evilText)
	}
	if pwned != "undefined" {
		t.Error("a script in a task name ran")
	}
	for _, q := range s.PeekQueue(10) {
		if q.Name != "heartbeat" && !slices.Contains(ids, fmt.Sprintf("task-%d", q.ID)) {
			t.Errorf("queued task %d (%s) is not on the page: %v", q.ID, q.Name, ids)
		}
	}

	// Cancel: a click asks first, naming the task; the second click
	// cancels it.
	if err := chromedp.Do(browser,
		chromedp.Click(chromedp.CSS(fmt.Sprintf("#cancel-%d", victimID))),
		chromedp.WaitVisible(chromedp.CSS("#confirm")),
	); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	question, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#confirm-question")))
	if err != nil {
		t.Fatal(err)
	}
	if question != fmt.Sprintf("Cancel task %d, victim?", victimID) || victim.IsCanceled() {
		t.Errorf("the confirmation asks %q (canceled already: %v)", question, victim.IsCanceled())
	}
	if err := chromedp.Do(browser,
		chromedp.Click(chromedp.CSS("#confirm")),
		chromedp.WaitVisible(chromedp.CSS("#flash")),
	); err != nil {
		t.Fatalf("confirm cancel: %v", err)
	}
	message, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#flash.flash-ok")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(message, fmt.Sprintf("task %d canceled", victimID)) {
		t.Errorf("after the click the page says %q", message)
	}
	if !victim.IsCanceled() {
		t.Error("the click did not cancel the task")
	}

	if os.Getenv(screenshotEnv) != "" {
		if err := chromedp.Do(browser,
			chromedp.Navigate(base),
			chromedp.WaitVisible(chromedp.CSS("#stat-completed")),
		); err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		screenshotTo(t, browser, screenshotEnv)
	}
}
