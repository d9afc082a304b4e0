package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The states as they are: canceled apart from completed, an old error as
// history, failed runs that agree with the history after a Retry, and
// counts on the state tabs.

func TestClusterDoneTaskShowsItsEarlierErrorAsHistoryNotAsLastError(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "flaky", "", time.Now(), cluster.WithTaskMaxRetries(3))
	succeeded := make(chan struct{})
	var runs atomic.Int32
	worker := startWorker(t, rdb, "flaky", func(context.Context, cluster.Task) error {
		if runs.Add(1) == 1 {
			return errors.New("connection reset by peer")
		}
		close(succeeded)
		return nil
	}, cluster.WithKeepDone(time.Hour, 100), cluster.WithBackoff(func(int) time.Duration { return 0 }))
	<-succeeded
	stopWorker(t, worker)
	info, ok := getInfo(t, node, id)
	if !ok || info.State != cluster.Done {
		t.Fatalf("task %+v %v, want a done record", info, ok)
	}
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/task?id="+id)
	mustContain(t, body, `<span id="state" class="state-done">completed</span>`, `id="past-error">connection reset by peer</pre>`, "<h2>Earlier error</h2>")
	if strings.Contains(body, `id="last-error"`) {
		t.Error("a completed task shows a red last error")
	}
}

func TestClusterCanceledIsItsOwnOutcome(t *testing.T) {
	rdb := startRedis(t)
	keeper := newWorker(t, rdb, cluster.WithKeepDone(time.Hour, 100)) // never started: it only acts
	id := scheduleAt(t, keeper, "email", "", time.Now().Add(time.Hour))
	if c, err := keeper.Cancel(context.Background(), id); err != nil || !c.Removed {
		t.Fatalf("Cancel: %+v %v", c, err)
	}
	info, ok := getInfo(t, keeper, id)
	if !ok || info.State != cluster.Done {
		t.Fatalf("canceled task %+v %v, want a done record", info, ok)
	}
	srv := serveCluster(t, keeper)
	_, body := get(t, srv+"/cluster/task?id="+id)
	mustContain(t, body, `<span id="state" class="state-done">canceled</span>`, "<th>Canceled</th>")
	if strings.Contains(body, ">completed<") {
		t.Error("a canceled task shows as completed")
	}
	_, body = get(t, srv+"/cluster/tasks?state=done")
	mustContain(t, body, `<span class="outcome-canceled">canceled</span>`)
}

func TestClusterFailedRunsAgreeWithTheHistoryAfterARetry(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "charge", 1, "card declined")
	if err := node.Retry(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/task?id="+id)
	mustContain(t, body, `<td id="attempt">0 counted toward the retry limit of 0; <span id="failed-history">1 failed or lost in the runs below</span>`)
}

func TestClusterStateTabsShowTheirCounts(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	for range 3 {
		scheduleAt(t, node, "email", "", time.Now().Add(time.Hour))
	}
	scheduleAt(t, node, "sms", "", time.Now().Add(time.Hour))
	scheduleAt(t, node, "email", "", time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "email", 1, "bounced")
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/tasks?state=pending")
	mustContain(t, body, `id="tab-pending" class="here">pending <span class="count">4</span>`, `id="tab-dead">dead <span class="count">1</span>`, `<span id="state-total">4</span>`)
	_, body = get(t, srv+"/cluster/tasks?state=pending&kind=email")
	mustContain(t, body, `id="tab-pending" class="here">pending <span class="count">3</span>`, `<span id="state-total">3</span>`)
}

func TestClusterRetryingTaskShowsItsNextRunBesideItsFirstDueTime(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "flaky", "", time.Now(), cluster.WithTaskMaxRetries(3))
	runTasks(t, rdb, "flaky", 1, "upstream 503", cluster.WithBackoff(func(int) time.Duration { return time.Hour }))
	info, _ := getInfo(t, node, id)
	if !info.Retrying || info.NextRun.Sub(info.Due) < 50*time.Minute {
		t.Fatalf("task %+v, want retrying with its next run an hour after its due time", info)
	}
	abs := func(tm time.Time) string { return `">` + tm.UTC().Format("2006-01-02 15:04:05") + " UTC</time>" }
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/task?id="+id)
	mustContain(t, body, `<td id="next-run"><time datetime="`+info.NextRun.UTC().Format(time.RFC3339Nano)+abs(info.NextRun),
		`<td id="due"><time datetime="`+info.Due.UTC().Format(time.RFC3339Nano)+abs(info.Due), "(first due)")
	_, body = get(t, srv+"/cluster/tasks?state=pending")
	mustContain(t, body, abs(info.NextRun), `<span class="muted">first due <time datetime="`+info.Due.UTC().Format(time.RFC3339Nano))
}

func TestClusterTimelineIsChartedOnTheOverviewAndPerKind(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	for range 3 {
		scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	}
	for range 2 {
		scheduleAt(t, node, "email", "", time.Now())
	}
	killTasks(t, rdb, "charge", 3, "declined")
	runTasks(t, rdb, "email", 2, "")
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/")
	mustContain(t, body, `<p id="timeline-totals">5 runs ended, 3 failed, 0 lost in the span.</p>`,
		`id="chart-tl-runs"`, `id="chart-tl-lateness"`, `id="chart-tl-pending"`, `id="chart-tl-overdue"`, "log scale", `href="?span=24h#timeline"`)
	_, body = get(t, srv+"/cluster/tasks?state=dead&kind=charge&span=6h")
	mustContain(t, body, "Kind charge, by minute, last 6h", `<p id="timeline-totals">3 runs ended, 3 failed, 0 lost in the span.</p>`,
		`href="?kind=charge&amp;span=24h&amp;state=dead#timeline"`)
	if code, body := get(t, srv+"/cluster/?span=7d"); code != http.StatusBadRequest || !strings.Contains(body, "must be 1h, 6h or 24h") {
		t.Errorf("span=7d: %d, want 400", code)
	}
}
