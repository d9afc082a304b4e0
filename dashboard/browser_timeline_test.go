package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/go-stpe/scheduler/cluster"
)

// timelineScreenshotEnv names a file the timeline browser test writes a
// PNG of the cluster overview to, with several minutes of history
// (docs/dashboard-cluster-overview.png was taken so).
const timelineScreenshotEnv = "DASHBOARD_TIMELINE_SCREENSHOT"

// The load of the timeline test: loadPeriod between two tasks (20 a
// second), alternately of each kind; a third of the charges fail.
const (
	loadPeriod  = 50 * time.Millisecond
	loadMinutes = 4 // minutes with runs: three minute boundaries crossed
)

// plottedChart is what the browser draws of one timeline chart.
type plottedChart struct {
	ID      string        `json:"id"`
	Log     bool          `json:"log"`
	XLabels []string      `json:"xlabels"`
	YLabels []string      `json:"ylabels"`
	Axes    int           `json:"axes"`
	Bottom  float64       `json:"bottom"` // the time axis's y
	Lines   []plottedLine `json:"lines"`
}

// plottedLine is one series as the browser parsed its polyline.
type plottedLine struct {
	Label   string       `json:"label"`
	Points  [][2]float64 `json:"points"`
	Visible bool         `json:"visible"` // stroked and of non-zero size
}

// readCharts reads the timeline charts of the page in the browser: the
// points are the polylines' SVGPointList, as Chromium parsed them.
const readCharts = `Array.from(document.querySelectorAll("figure.chart[id^='chart-tl-']")).map(f => {
	const keys = Array.from(f.querySelectorAll("figcaption .key")).map(k => k.textContent.split(":")[0].trim());
	return {
		id: f.id,
		log: f.querySelector("figcaption .scale") !== null,
		xlabels: Array.from(f.querySelectorAll("text.xlabel")).map(t => t.textContent),
		ylabels: Array.from(f.querySelectorAll("text.ylabel")).map(t => t.textContent),
		axes: f.querySelectorAll("line.axis").length,
		bottom: f.querySelector("line.axis").y1.baseVal.value,
		lines: Array.from(f.querySelectorAll("polyline")).map((p, i) => {
			const r = p.getBoundingClientRect(), s = getComputedStyle(p);
			return {
				label: keys[i] || "",
				points: Array.from(p.points).map(pt => [pt.x, pt.y]),
				visible: s.stroke !== "none" && s.visibility !== "hidden" && (r.width > 0 || r.height > 0),
			};
		}),
	};
})`

// TestBrowserChartsMinutesOfClusterLoad runs a steady load of cluster
// tasks (20 a second, some failing) on a real worker node and redis-server
// until the timeline holds four minutes with runs (three minute
// boundaries of the clock crossed; at most about three minutes), then
// loads the cluster overview and one kind's listing in Chromium and checks
// each chart against Node.Timeline: one point per minute, in the minutes'
// order and at evenly spaced times, each series' heights ordered as its
// values, time and value labels drawn, the totals line equal to the
// minutes' sums, and the p99 lateness line at or above the p50 one on the
// log scale.
func TestBrowserChartsMinutesOfClusterLoad(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	var handled, charges atomic.Int64
	worker := newWorker(t, rdb)
	if err := worker.Handle("email", func(context.Context, cluster.Task) error {
		handled.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := worker.Handle("charge", func(context.Context, cluster.Task) error {
		handled.Add(1)
		if charges.Add(1)%3 == 0 {
			return errors.New("card declined")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := serveBoth(t, nil, node) + "/"

	// The load, until stop is closed; scheduled counts its tasks.
	start := time.Now()
	t.Logf("load starts %v before the next minute; it stops once %d minutes have runs",
		start.Truncate(time.Minute).Add(time.Minute).Sub(start).Round(time.Second), loadMinutes)
	stop, loadDone := make(chan struct{}), make(chan error, 1)
	var scheduled int64
	go func() {
		tick := time.NewTicker(loadPeriod)
		defer tick.Stop()
		for {
			kind := [2]string{"email", "charge"}[scheduled%2]
			if _, err := node.Schedule(context.Background(), kind, []byte(`{}`), time.Now(), cluster.WithTaskMaxRetries(0)); err != nil {
				loadDone <- err
				return
			}
			scheduled++
			select {
			case <-stop:
				loadDone <- nil
				return
			case <-tick.C:
			}
		}
	}()
	since := start.Add(-time.Minute)
	waitForTimeline(t, node, since, "the load to fill "+strconv.Itoa(loadMinutes)+" minutes", func(mins []cluster.Minute) bool {
		return minutesWithRuns(mins) >= loadMinutes
	})
	close(stop)
	if err := <-loadDone; err != nil {
		t.Fatalf("scheduling the load: %v", err)
	}
	// Every task runs once (no retry): the timeline then counts them all.
	waitForTimeline(t, node, since, fmt.Sprintf("the timeline to count the %d runs", scheduled), func(mins []cluster.Minute) bool {
		return sumOf(mins).Runs >= int(scheduled)
	})
	stopWorker(t, worker) // nothing is written to the timeline after this
	if got := handled.Load(); got != scheduled {
		t.Fatalf("the handlers ran %d times for %d tasks", got, scheduled)
	}
	mins, err := node.Timeline(context.Background(), "", since)
	if err != nil {
		t.Fatal(err)
	}
	if got := sumOf(mins); got.Runs != int(scheduled) || got.Failed != int(charges.Load()/3) || got.Lost != 0 {
		t.Fatalf("Timeline sums %+v; %d tasks ran, %d of them charges", got, scheduled, charges.Load())
	}
	if first, last := firstLastWithRuns(mins); last-first+1 != minutesWithRuns(mins) {
		t.Fatalf("a minute in the load has no run: %+v", mins)
	}
	t.Logf("%d tasks over %d minutes in %v", scheduled, minutesWithRuns(mins), time.Since(start).Round(time.Second))

	// The browser starts now: its context lasts a minute (startBrowser).
	browser := newBrowser(t)
	overview := checkTimelinePage(t, browser, node, base+"cluster/", "")
	if overview.Runs != int(scheduled) {
		t.Errorf("the overview's timeline totals %d runs; %d tasks ran", overview.Runs, scheduled)
	}
	screenshotTo(t, browser, timelineScreenshotEnv)
	charge := checkTimelinePage(t, browser, node, base+"cluster/tasks?state=dead&kind=charge", "charge")
	if charge.Runs != int(charges.Load()) || charge.Failed != overview.Failed {
		t.Errorf("the charge page's timeline totals %+v; %d charges ran, %d failed in all", charge, charges.Load(), overview.Failed)
	}
}

// checkTimelinePage loads u in the browser and checks its timeline charts
// and totals against kind's Node.Timeline over the last hour, the page's
// span, and returns the totals. The page is loaded again if a minute
// began while it was read (then its minutes may differ from the ones
// read here before and after).
func checkTimelinePage(t *testing.T, browser context.Context, node *cluster.Node, u, kind string) cluster.Minute {
	t.Helper()
	var mins []cluster.Minute
	var charts []plottedChart
	var totals string
	for try := 0; ; try++ {
		before := timelineSince(t, node, kind, time.Now().Add(-time.Hour))
		if err := chromedp.Do(browser, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("#timeline-totals"))); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var err error
		charts, err = chromedp.Run(browser, chromedp.Evaluate[[]plottedChart](readCharts))
		if err != nil {
			t.Fatalf("%s: reading the charts: %v", u, err)
		}
		totals = textOf(t, browser, "#timeline-totals")
		after := timelineSince(t, node, kind, time.Now().Add(-time.Hour))
		if len(before) == len(after) && len(before) > 0 && before[0].Start.Equal(after[0].Start) {
			mins = after
			break
		}
		if try == 2 {
			t.Fatalf("%s: a minute began during each of three loads", u)
		}
	}
	sum := sumOf(mins)
	if want := fmt.Sprintf("%d runs ended, %d failed, %d lost in the span.", sum.Runs, sum.Failed, sum.Lost); totals != want {
		t.Errorf("%s: totals %q, Timeline says %q", u, totals, want)
	}
	values := map[string]func(cluster.Minute) float64{
		"runs":    func(m cluster.Minute) float64 { return float64(m.Runs) },
		"failed":  func(m cluster.Minute) float64 { return float64(m.Failed) },
		"lost":    func(m cluster.Minute) float64 { return float64(m.Lost) },
		"p50":     func(m cluster.Minute) float64 { return float64(m.LatenessP50) },
		"p99":     func(m cluster.Minute) float64 { return float64(m.LatenessP99) },
		"pending": func(m cluster.Minute) float64 { return float64(m.Pending) },
		"age":     func(m cluster.Minute) float64 { return float64(m.OldestOverdue) },
	}
	wantLines := map[string]string{
		"chart-tl-runs": "runs failed lost", "chart-tl-lateness": "p50 p99",
		"chart-tl-pending": "pending", "chart-tl-overdue": "age",
	}
	if len(charts) != len(wantLines) {
		t.Fatalf("%s: %d timeline charts, want %d", u, len(charts), len(wantLines))
	}
	for _, c := range charts {
		var labels []string
		for _, l := range c.Lines {
			labels = append(labels, l.Label)
		}
		if got := strings.Join(labels, " "); got != wantLines[c.ID] {
			t.Errorf("%s: %s draws %q, want %q", u, c.ID, got, wantLines[c.ID])
			continue
		}
		checkAxes(t, u, c)
		for _, l := range c.Lines {
			checkSeries(t, u+" "+c.ID+" "+l.Label, mins, l, c.Bottom, values[l.Label])
		}
	}
	checkLateness(t, u, charts, mins)
	return sum
}

// checkAxes checks that c has its two axes, value labels and time labels
// ending at "now".
func checkAxes(t *testing.T, u string, c plottedChart) {
	t.Helper()
	if c.Axes != 2 {
		t.Errorf("%s: %s has %d axis lines, want 2", u, c.ID, c.Axes)
	}
	if len(c.YLabels) < 2 || slices.Contains(c.YLabels, "") {
		t.Errorf("%s: %s value labels %q", u, c.ID, c.YLabels)
	}
	named := 0
	for _, l := range c.XLabels {
		if l != "" {
			named++
		}
	}
	if len(c.XLabels) < 3 || named < 2 || c.XLabels[0] != "now" {
		t.Errorf("%s: %s time labels %q", u, c.ID, c.XLabels)
	}
}

// checkSeries checks a plotted line against value of each minute: one
// point per minute at evenly spaced x, left to right, at the time axis
// where the value is 0, and higher where the value is larger (equal where
// it is equal). Heights are compared, not computed: the scale is the
// page's own.
func checkSeries(t *testing.T, what string, mins []cluster.Minute, l plottedLine, bottom float64, value func(cluster.Minute) float64) {
	t.Helper()
	if len(l.Points) != len(mins) {
		t.Errorf("%s: %d points for %d minutes", what, len(l.Points), len(mins))
		return
	}
	if !l.Visible {
		t.Errorf("%s: the line is not visible", what)
	}
	step := (l.Points[len(l.Points)-1][0] - l.Points[0][0]) / float64(len(mins)-1)
	for i, p := range l.Points {
		if x := l.Points[0][0] + float64(i)*step; math.Abs(p[0]-x) > 0.15 || step <= 0 {
			t.Errorf("%s: point %d at x %.1f, want %.1f (one point a minute)", what, i, p[0], x)
			return
		}
		v := value(mins[i])
		if v == 0 && p[1] != bottom {
			t.Errorf("%s: minute %v is 0 but plotted at y %.1f, the axis at %.1f", what, mins[i].Start, p[1], bottom)
		}
		for j := range i {
			w, q := value(mins[j]), l.Points[j]
			if (v > w && p[1] > q[1]) || (v < w && p[1] < q[1]) || (v == w && p[1] != q[1]) {
				t.Errorf("%s: minute %v (%v at y %.1f) and minute %v (%v at y %.1f) are drawn out of order",
					what, mins[i].Start, v, p[1], mins[j].Start, w, q[1])
				return
			}
		}
	}
	if strings.HasSuffix(what, " runs") {
		for i, m := range mins {
			if m.Runs > 0 && l.Points[i][1] >= bottom {
				t.Errorf("%s: minute %v has %d runs but is drawn on the axis", what, m.Start, m.Runs)
			}
		}
	}
}

// checkLateness checks that the lateness chart is on a log scale and its
// p99 line is at or above its p50 line at every minute, and above the
// time axis where runs started late.
func checkLateness(t *testing.T, u string, charts []plottedChart, mins []cluster.Minute) {
	t.Helper()
	for _, c := range charts {
		if c.ID != "chart-tl-lateness" || len(c.Lines) != 2 || len(c.Lines[0].Points) != len(mins) || len(c.Lines[1].Points) != len(mins) {
			continue
		}
		if !c.Log {
			t.Errorf("%s: the lateness chart is not on a log scale", u)
		}
		p50, p99 := c.Lines[0].Points, c.Lines[1].Points
		above := false
		for i, m := range mins {
			if m.LatenessP50 > m.LatenessP99 {
				t.Errorf("Timeline's minute %v has p50 %v above p99 %v", m.Start, m.LatenessP50, m.LatenessP99)
			}
			if p99[i][1] > p50[i][1] {
				t.Errorf("%s: minute %v draws p99 (y %.1f) below p50 (y %.1f)", u, m.Start, p99[i][1], p50[i][1])
			}
			above = above || p99[i][1] < c.Bottom
		}
		if !above {
			t.Errorf("%s: the p99 lateness line lies on the time axis throughout", u)
		}
		return
	}
	t.Errorf("%s: no lateness chart of two full lines", u)
}

// waitForTimeline reads the whole cluster's timeline since since every
// quarter second until done holds, and fails the test if five minutes
// pass first.
func waitForTimeline(t *testing.T, node *cluster.Node, since time.Time, what string, done func([]cluster.Minute) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		mins := timelineSince(t, node, "", since)
		if done(mins) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 minutes for %s; the timeline holds %+v", what, mins)
		}
		<-tick.C
	}
}

func timelineSince(t *testing.T, node *cluster.Node, kind string, since time.Time) []cluster.Minute {
	t.Helper()
	mins, err := node.Timeline(context.Background(), kind, since)
	if err != nil {
		t.Fatal(err)
	}
	return mins
}

// sumOf adds up the minutes' runs, failures and lost runs.
func sumOf(mins []cluster.Minute) cluster.Minute {
	var s cluster.Minute
	for _, m := range mins {
		s.Runs += m.Runs
		s.Failed += m.Failed
		s.Lost += m.Lost
	}
	return s
}

func minutesWithRuns(mins []cluster.Minute) int {
	n := 0
	for _, m := range mins {
		if m.Runs > 0 {
			n++
		}
	}
	return n
}

// firstLastWithRuns returns the indexes of the first and last minutes
// with runs.
func firstLastWithRuns(mins []cluster.Minute) (first, last int) {
	first, last = -1, -1
	for i, m := range mins {
		if m.Runs > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last
}
