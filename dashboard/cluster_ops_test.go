package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/dashboard"
)

// Tests of the cluster pages built on kinds, run history, done records and
// pausing.

func TestClusterOverviewCountsByKindAndPausesAndResumesAKind(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	later := time.Now().Add(time.Hour)
	for range 3 {
		scheduleAt(t, node, "email", "", later)
	}
	scheduleAt(t, node, "sms", "", later)
	scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "charge", 1, "declined")
	srv := serveCluster(t, node)

	_, kinds, err := node.CountsByKind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, srv+"/cluster/")
	for _, k := range kinds {
		mustContain(t, body,
			fmt.Sprintf(`<a href="tasks?state=pending&amp;kind=%s">%d</a>`, k.Kind, k.Pending),
			fmt.Sprintf(`<a href="tasks?state=dead&amp;kind=%s">%d</a>`, k.Kind, k.Dead))
	}
	if len(kinds) != 3 {
		t.Errorf("CountsByKind gives %d kinds, want charge, email and sms", len(kinds))
	}
	token := csrfOf(t, body)

	// Pause from the kind's row: the kind is paused in Redis, the page
	// says so and offers Resume.
	code, body := postAction(t, srv, token, "pause", url.Values{"kind": {"email"}})
	if code != http.StatusSeeOther {
		t.Fatalf("pause: %d", code)
	}
	mustContain(t, body, "kind email paused", `<td data-label="Kind" class="kind">email <span class="tag">paused</span></td>`, `action="resume"`)
	if paused, err := node.PausedKinds(context.Background()); err != nil || !slices.Equal(paused, []string{"email"}) {
		t.Errorf("after pause, PausedKinds says %v (%v)", paused, err)
	}
	// A pending task of the paused kind says so on its page.
	emails, err := node.List(context.Background(), cluster.ListQuery{State: cluster.Pending, Kind: "email", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, body = get(t, srv+"/cluster/task?id="+emails.Tasks[0].ID)
	mustContain(t, body, `<span class="tag" id="paused">kind paused</span>`)

	// A kind nothing knows (no task, no node handling it) is refused as
	// an error, with the cluster's reason.
	if code, body := postAction(t, srv, token, "pause", url.Values{"kind": {"fax"}}); code != http.StatusNotFound || !strings.Contains(body, "unknown kind") || !strings.Contains(body, "flash-error") {
		t.Errorf("pause of a kind nothing knows: %d, want 404 saying unknown kind", code)
	}
	if code, _ := postAction(t, srv, token, "resume", url.Values{"kind": {"email"}}); code != http.StatusSeeOther {
		t.Errorf("resume: %d", code)
	}
	if paused, err := node.PausedKinds(context.Background()); err != nil || len(paused) != 0 {
		t.Errorf("after resuming email and a refused pause of fax, PausedKinds says %v (%v)", paused, err)
	}
	if code, _ := postAction(t, srv, token, "pause", url.Values{"kind": {"two words"}}); code != http.StatusBadRequest {
		t.Errorf("pause of an invalid kind: %d, want 400", code)
	}
}

func TestClusterTasksByKindListWhatListListsForTheKind(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	base := time.Now().Add(time.Hour)
	for i := range 5 {
		scheduleAt(t, node, "email", "", base.Add(time.Duration(i)*time.Minute))
		scheduleAt(t, node, "sms", "", base.Add(time.Duration(i)*time.Minute+time.Second))
	}
	want, err := node.List(context.Background(), cluster.ListQuery{State: cluster.Pending, Kind: "sms", Limit: cluster.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	var wantIDs []string
	for _, info := range want.Tasks {
		wantIDs = append(wantIDs, info.ID)
	}
	srv := serveCluster(t, node, dashboard.WithPageSize(2))

	var got []string
	next := "tasks?state=pending&kind=sms"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages of 2 for 5 tasks")
		}
		_, body := get(t, srv+"/cluster/"+next)
		mustContain(t, body, `<span class="kind" id="kind-filter">sms</span>`)
		got = append(got, listedIDs(body)...)
		next = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			next = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if !slices.Equal(got, wantIDs) {
		t.Errorf("the pages of kind sms list %v, List says %v", got, wantIDs)
	}
}

func TestClusterTaskPageShowsRunHistoryOwnerRetryingAndDone(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	srv := serveCluster(t, node)

	// A task that failed once and waits for its retry: retrying, with the
	// failed run in its history.
	flaky := scheduleAt(t, node, "flaky", "", time.Now(), cluster.WithTaskMaxRetries(3))
	runTasks(t, rdb, "flaky", 1, "timeout talking to upstream", cluster.WithBackoff(func(int) time.Duration { return time.Hour }))
	info, _ := getInfo(t, node, flaky)
	if !info.Retrying || len(info.History) != 1 {
		t.Fatalf("flaky task %+v, want retrying with one run", info)
	}
	_, body := get(t, srv+"/cluster/task?id="+flaky)
	run := info.History[0]
	mustContain(t, body, `<span class="tag" id="retrying">retrying</span>`,
		fmt.Sprintf(`<tr class="outcome-failed"><td data-label="Node">%s</td>`, run.Node),
		`<td data-label="Outcome" class="outcome">failed</td><td data-label="Error" class="error">timeout talking to upstream</td>`)
	_, body = get(t, srv+"/cluster/tasks?state=pending")
	mustContain(t, body, flaky+`</a> <span class="tag">retrying</span>`)

	// A running task names the node that runs it.
	release := make(chan struct{})
	started := make(chan struct{})
	slow := scheduleAt(t, node, "slow", "", time.Now())
	worker := startWorker(t, rdb, "slow", func(ctx context.Context, _ cluster.Task) error {
		close(started)
		<-release
		return nil
	}, cluster.WithKeepDone(time.Hour, 100))
	<-started
	info, _ = getInfo(t, node, slow)
	_, body = get(t, srv+"/cluster/task?id="+slow)
	if info.State != cluster.Running || info.Owner != worker.Name() {
		t.Errorf("slow task %+v, want running on %s", info, worker.Name())
	}
	mustContain(t, body, `<span id="state" class="state-running">running</span>`, `<td id="owner">`+worker.Name()+", since")
	close(release)
	stopWorker(t, worker)

	// Kept as a done record (the worker has WithKeepDone): listed under
	// done, with its successful run and no action.
	info, ok := getInfo(t, node, slow)
	if !ok || info.State != cluster.Done {
		t.Fatalf("slow task after its run: %+v %v, want done", info, ok)
	}
	_, body = get(t, srv+"/cluster/tasks?state=done")
	if ids := listedIDs(body); !slices.Equal(ids, []string{slow}) {
		t.Errorf("done tasks %v, want [%s]", ids, slow)
	}
	_, body = get(t, srv+"/cluster/task?id="+slow)
	mustContain(t, body, `<span id="state" class="state-done">completed</span>`, `<td data-label="Outcome" class="outcome">succeeded</td>`, "<th>Finished</th>")
	if strings.Contains(body, `method="post"`) {
		t.Error("a done record offers actions")
	}
}
