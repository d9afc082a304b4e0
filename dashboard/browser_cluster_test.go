package dashboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cron"
)

// clusterScreenshotEnv names a file the cluster browser test writes a PNG
// of a dead task's page to (docs/dashboard-cluster.png was taken so).
const clusterScreenshotEnv = "DASHBOARD_CLUSTER_SCREENSHOT"

// TestBrowserShowsTheClusterBesideTheSchedulerAndActsOnIt serves one
// dashboard of a real Scheduler and a real cluster node on a real
// redis-server, walks every page in Chromium, and clicks Retry on a dead
// task and Cancel on a pending one.
func TestBrowserShowsTheClusterBesideTheSchedulerAndActsOnIt(t *testing.T) {
	browser := newBrowser(t)
	rdb := startRedis(t)
	node := newNode(t, rdb)
	s := newScheduler(t)
	if _, err := s.ScheduleWithFixedDelay(idle, time.Hour, time.Minute, scheduler.WithName("cleanup")); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	pending := scheduleAt(t, node, "email", `{"to":"ada@example.com"}`, later)
	scheduleAt(t, node, "email", `{"to":"bob@example.com"}`, later.Add(time.Minute))
	const evilKind = `<script>window.pwned=1</script>`
	evil := scheduleAt(t, node, evilKind, `<img src=x onerror="window.pwned=2">`, time.Now(), cluster.WithTaskMaxRetries(0))
	dead := scheduleAt(t, node, "charge", `{"card":"4242","amount":1200}`, time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, evilKind, 1, `<b onmouseover="window.pwned=3">boom</b>`)
	// A started worker for the nodes and periodic pages: it handles a kind
	// with no task and declares a nightly task that never runs meanwhile.
	nightly, err := cron.Parse("0 3 * * *")
	if err != nil {
		t.Fatal(err)
	}
	worker := newWorker(t, rdb)
	if err := worker.Handle("sms", func(context.Context, cluster.Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := worker.Periodic("nightly-report", nightly, func(context.Context, cluster.Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	killTasks(t, rdb, "charge", 1, "card declined: insufficient funds\ngoroutine 12 [running]:\nbilling.charge(...)\n\tbilling/charge.go:42")
	base := serveBoth(t, s, node) + "/"

	text := func(sel string) string {
		t.Helper()
		return textOf(t, browser, sel)
	}
	eval := func(js string) []string {
		t.Helper()
		v, err := chromedp.Run(browser, chromedp.Evaluate[[]string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	visit := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browser, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// The Scheduler's pages are there, and link to the cluster's.
	visit("overview", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#stat-queued")))
	if got, want := text("#stat-queued"), fmt.Sprint(s.Stats().Queued); got != want {
		t.Errorf("overview shows %s queued, Stats says %s", got, want)
	}

	// The cluster overview: counts by state as Counts says, the dead
	// tasks listed, the evil kind and error shown as text.
	visit("cluster", chromedp.Click(chromedp.CSS(`a[href="cluster/"]`)), chromedp.WaitVisible(chromedp.CSS("#count-dead")))
	counts, err := node.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]int64{"#count-pending": counts.Pending, "#count-running": counts.Running, "#count-dead": counts.Dead} {
		if got := text(sel); got != fmt.Sprint(want) {
			t.Errorf("%s shows %s, Counts says %d", sel, got, want)
		}
	}
	_, kindCounts, err := node.CountsByKind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wantKinds []string
	for _, k := range kindCounts {
		wantKinds = append(wantKinds, fmt.Sprintf("%s %d %d %d %d", k.Kind, k.Pending, k.Running, k.Dead, k.Done))
	}
	gotKinds := eval(`Array.from(document.querySelectorAll("#kinds tbody tr")).map(r => Array.from(r.cells).slice(0, 5).map(c => c.textContent.trim()).join(" "))`)
	if !slices.Equal(gotKinds, wantKinds) {
		t.Errorf("kinds table %q, CountsByKind says %q", gotKinds, wantKinds)
	}
	// The cluster's timeline: four charts with their axes; the minute's
	// runs add up to the runs the worker nodes recorded.
	charts := eval(`Array.from(document.querySelectorAll("figure.chart")).map(f => f.id + " " + f.querySelectorAll("polyline").length + " " + f.querySelectorAll("text.xlabel").length)`)
	if !slices.Equal(charts, []string{"chart-tl-runs 3 7", "chart-tl-lateness 2 7", "chart-tl-pending 1 7", "chart-tl-overdue 1 7"}) {
		t.Errorf("timeline charts (id, lines, time labels): %q", charts)
	}
	if got := text("#timeline-totals"); got != "2 runs ended, 2 failed, 0 lost in the span." {
		t.Errorf("timeline totals %q, want the 2 failed runs", got)
	}
	screenshotTo(t, browser, "DASHBOARD_CLUSTER_OVERVIEW_SCREENSHOT")
	failures := eval(`Array.from(document.querySelectorAll("#failures a.id")).map(a => a.textContent)`)
	if !slices.Contains(failures, dead) || !slices.Contains(failures, evil) {
		t.Errorf("recent failures %v, want %s and %s", failures, dead, evil)
	}
	kinds := eval(`Array.from(document.querySelectorAll("#failures td.kind")).map(td => td.textContent)`)
	if !slices.Contains(kinds, evilKind) {
		t.Errorf("failure kinds %q, want %q shown as text", kinds, evilKind)
	}

	// The pending tasks, in List's order.
	visit("pending", chromedp.Click(chromedp.CSS(`a[href="tasks?state=pending"]`)), chromedp.WaitVisible(chromedp.CSS("#tasks")))
	list, err := node.List(context.Background(), cluster.ListQuery{State: cluster.Pending, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, info := range list.Tasks {
		want = append(want, info.ID)
	}
	if got := eval(`Array.from(document.querySelectorAll("#tasks a.id")).map(a => a.textContent)`); !slices.Equal(got, want) {
		t.Errorf("pending page lists %v, List says %v", got, want)
	}

	// Search by ID finds the dead task; its page shows what Get says.
	visit("search",
		chromedp.SendKeys(chromedp.CSS(`input[name="id"]`), dead),
		chromedp.Submit(chromedp.CSS(`form.search`)),
		chromedp.WaitVisible(chromedp.CSS("#retry")))
	info, ok, err := node.Get(context.Background(), dead)
	if err != nil || !ok {
		t.Fatalf("Get %s: %v %v", dead, ok, err)
	}
	if got := text("#state"); got != string(info.State) {
		t.Errorf("task page state %q, Get says %q", got, info.State)
	}
	if got := text("#last-error"); got != "card declined: insufficient funds" {
		t.Errorf("task page last error %q", got)
	}
	if got := text("#payload"); !strings.Contains(got, `"card": "4242"`) {
		t.Errorf("task page payload %q", got)
	}
	screenshotTo(t, browser, clusterScreenshotEnv)
	// At 420 px the task's page is no wider than the window.
	visit("narrow", chromedp.EmulateViewport(420, 900, chromedp.EmulateMobile), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#retry")))
	if wide, err := chromedp.Run(browser, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || wide > 420 {
		t.Errorf("the dead task's page at 420 px is %d px wide (%v)", wide, err)
	}
	screenshotTo(t, browser, clusterScreenshotEnv+"_420")
	visit("wide", chromedp.EmulateViewport(1400, 900), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#retry")))

	// Retry: one click, and the task is pending again in Redis.
	visit("retry", chromedp.Click(chromedp.CSS("#retry")), chromedp.WaitVisible(chromedp.CSS("#flash")))
	if msg := text("#flash.flash-ok"); !strings.Contains(msg, "task "+dead+" retried") {
		t.Errorf("after Retry the page says %q", msg)
	}
	if info, _, err := node.Get(context.Background(), dead); err != nil || info.State != cluster.Pending {
		t.Errorf("after Retry Get says %+v, %v; want pending", info, err)
	}
	if got := text("#state"); got != "pending" {
		t.Errorf("after Retry the page shows state %q", got)
	}

	// Cancel a pending task: gone from Redis.
	visit("pending task", chromedp.Navigate(base+"cluster/task?id="+pending), chromedp.WaitVisible(chromedp.CSS("#cancel")))
	visit("cancel", chromedp.Click(chromedp.CSS("#cancel")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	if q := text("#confirm-question"); q != "Cancel task "+pending+"?" {
		t.Errorf("Cancel asks %q", q)
	}
	if _, ok, err := node.Get(context.Background(), pending); err != nil || !ok {
		t.Errorf("Cancel acted before the confirmation (%v, %v)", ok, err)
	}
	visit("confirm cancel", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#flash")))
	if msg := text("#flash.flash-ok"); !strings.Contains(msg, "task "+pending+" canceled") {
		t.Errorf("after Cancel the page says %q", msg)
	}
	if _, ok, err := node.Get(context.Background(), pending); err != nil || ok {
		t.Errorf("after Cancel Get finds the task (%v, %v)", ok, err)
	}

	// The evil task's own page: payload, kind and error are text, and no
	// script or handler of theirs ran anywhere.
	visit("evil task", chromedp.Navigate(base+"cluster/task?id="+evil), chromedp.WaitVisible(chromedp.CSS("#payload")))
	if got := text("#kind"); got != evilKind {
		t.Errorf("evil kind shows as %q", got)
	}
	if got := text("#payload"); got != `<img src=x onerror="window.pwned=2">` {
		t.Errorf("evil payload shows as %q", got)
	}
	// The nodes and periodic tasks, as Members and PeriodicTasks say.
	visit("nodes", chromedp.Click(chromedp.CSS(`a[href="../cluster/nodes"]`)), chromedp.WaitVisible(chromedp.CSS("#members")))
	members, err := node.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wantNodes []string
	for _, m := range members {
		wantNodes = append(wantNodes, "node-"+m.Name)
	}
	if got := eval(`Array.from(document.querySelectorAll("#members tbody tr")).map(r => r.id)`); !slices.Equal(got, wantNodes) || !slices.Contains(got, "node-"+worker.Name()) {
		t.Errorf("nodes page rows %v, Members says %v (the worker is %s)", got, wantNodes, worker.Name())
	}
	visit("periodic", chromedp.Click(chromedp.CSS(`a[href="../cluster/periodic"]`)), chromedp.WaitVisible(chromedp.CSS("#periodic")))
	periodic, err := node.PeriodicTasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wantPeriodic []string
	for _, p := range periodic {
		wantPeriodic = append(wantPeriodic, p.Name+" "+p.Trigger+" "+p.Next.UTC().Format("2006-01-02 15:04:05")+" UTC")
	}
	gotPeriodic := eval(`Array.from(document.querySelectorAll("#periodic tbody tr")).map(r => [r.querySelector("td.name a").textContent, r.querySelector("td.trigger").textContent, r.querySelector("td.next time").textContent].join(" "))`)
	if !slices.Equal(gotPeriodic, wantPeriodic) || len(wantPeriodic) != 1 {
		t.Errorf("periodic page rows %q, PeriodicTasks says %q", gotPeriodic, wantPeriodic)
	}
	pwned, err := chromedp.Run(browser, chromedp.Evaluate[string](`typeof window.pwned`))
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "undefined" {
		t.Error("a script in a kind, payload or error ran")
	}
}
