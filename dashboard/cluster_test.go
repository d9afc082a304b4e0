package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/dashboard"
)

// serveCluster mounts a dashboard of node alone (no Scheduler) under
// prefix on a test server.
func serveCluster(t *testing.T, node *cluster.Node, opts ...dashboard.Option) string {
	t.Helper()
	return serveBoth(t, nil, node, opts...)
}

// scheduleAt stores a task of kind due at due and returns its ID.
func scheduleAt(t *testing.T, node *cluster.Node, kind, payload string, due time.Time, opts ...cluster.ScheduleOption) string {
	t.Helper()
	id, err := node.Schedule(context.Background(), kind, []byte(payload), due, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func getInfo(t *testing.T, node *cluster.Node, id string) (cluster.Info, bool) {
	t.Helper()
	info, ok, err := node.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return info, ok
}

var taskLink = regexp.MustCompile(`href="task\?id=([^"]+)" class="id"`)

// listedIDs returns the task IDs a listing page links to, in order.
func listedIDs(body string) []string {
	var ids []string
	for _, m := range taskLink.FindAllStringSubmatch(body, -1) {
		id, _ := url.QueryUnescape(html.UnescapeString(m[1]))
		ids = append(ids, id)
	}
	return ids
}

var nextLink = regexp.MustCompile(`href="(tasks\?[^"]+)" id="next-page"`)

func TestClusterOverviewCountsByStateAndListsTheLatestFailures(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	later := time.Now().Add(time.Hour)
	for i := range 3 {
		scheduleAt(t, node, "email", fmt.Sprint(i), later)
	}
	dead := scheduleAt(t, node, "charge", "card", time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "charge", 1, "card declined")
	srv := serveCluster(t, node)

	counts, err := node.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, srv+"/cluster/")
	if code != http.StatusOK {
		t.Fatalf("GET cluster/: %d\n%s", code, body)
	}
	mustContain(t, body,
		fmt.Sprintf(`id="count-pending">%d<`, counts.Pending),
		fmt.Sprintf(`id="count-running">%d<`, counts.Running),
		fmt.Sprintf(`id="count-dead">%d<`, counts.Dead),
		"card declined", `href="../static/style.css"`, `href="tasks?state=dead"`)
	if counts.Pending != 3 || counts.Dead != 1 {
		t.Errorf("counts %+v, want 3 pending and 1 dead", counts)
	}
	if ids := listedIDs(body); !slices.Equal(ids, []string{dead}) {
		t.Errorf("recent failures list %v, want [%s]", ids, dead)
	}
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		t.Error("the page refers to another host")
	}
}

func TestClusterTasksPagesFollowTheCursorThroughEveryTask(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	base := time.Now().Add(time.Hour)
	for i := range 7 {
		scheduleAt(t, node, "report", "", base.Add(time.Duration(i)*time.Minute))
	}
	want, err := node.List(context.Background(), cluster.ListQuery{State: cluster.Pending, Limit: cluster.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveCluster(t, node, dashboard.WithPageSize(3))

	var got []string
	next := "tasks?state=pending"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages of 3 for 7 tasks")
		}
		code, body := get(t, srv+"/cluster/"+next)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", next, code)
		}
		got = append(got, listedIDs(body)...)
		next = ""
		if m := nextLink.FindStringSubmatch(body); m != nil {
			next = html.UnescapeString(m[1])
		}
	}
	var wantIDs []string
	for _, info := range want.Tasks {
		wantIDs = append(wantIDs, info.ID)
	}
	if !slices.Equal(got, wantIDs) {
		t.Errorf("the pages list %v, List says %v", got, wantIDs)
	}
	// A smaller page on request, never a larger one.
	_, body := get(t, srv+"/cluster/tasks?state=pending&limit=2")
	if n := len(listedIDs(body)); n != 2 {
		t.Errorf("limit=2 lists %d tasks", n)
	}
	// A larger one too, up to cluster.MaxPage: never silently cut.
	_, body = get(t, srv+"/cluster/tasks?state=pending&limit=500")
	if n := len(listedIDs(body)); n != len(wantIDs) {
		t.Errorf("limit=500 with page size 3 lists %d tasks, want all %d", n, len(wantIDs))
	}
	code, body := get(t, srv+"/cluster/tasks?state=pending&limit=1001")
	if code != http.StatusBadRequest || !strings.Contains(body, "must be a whole number from 1 to 1000") {
		t.Errorf("limit=1001: %d, want 400 saying the most", code)
	}
}

func TestClusterTaskPageShowsTheTaskAndItsLastError(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "resize", `{"image":"cat.png","sizes":[64,128]}`, time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "resize", 1, "decoder failed\ngoroutine 7 [running]:\nmain.resize()")
	srv := serveCluster(t, node)

	info, ok := getInfo(t, node, id)
	if !ok || info.State != cluster.Dead {
		t.Fatalf("task %s: %+v %v, want dead", id, info, ok)
	}
	code, body := get(t, srv+"/cluster/task?id="+url.QueryEscape(id))
	if code != http.StatusOK {
		t.Fatalf("GET task: %d", code)
	}
	mustContain(t, body,
		`<span id="state" class="state-dead">dead</span>`, `<a href="tasks?state=dead&amp;kind=resize">resize</a>`,
		fmt.Sprintf(`<td id="attempt">%d counted toward the retry limit of %d</td>`, info.Attempt, info.MaxRetries),
		`<pre class="error" id="last-error">decoder failed</pre>`,
		`<pre id="stack">goroutine 7 [running]:`+"\n"+`main.resize()</pre>`,
		// JSON is indented, and escaped like every value.
		"{\n  &#34;image&#34;: &#34;cat.png&#34;,",
		`id="retry"`, `id="delete"`, `id="cancel"`)
	if strings.Contains(body, `id="run-now"`) {
		t.Error("a dead task offers run now")
	}

	// Search by ID is a GET of the same page; an unknown ID is a 404 that
	// says so.
	code, body = get(t, srv+"/cluster/task?id=no-such-task")
	if code != http.StatusNotFound || !strings.Contains(body, `id="not-found"`) {
		t.Errorf("unknown ID: %d, want 404 with a not-found note", code)
	}
}

func TestClusterPayloadIsTextOrHexAndTruncatedWithAWayToSeeAll(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	later := time.Now().Add(time.Hour)
	binary := scheduleAt(t, node, "blob", "\x00\x01\xffPNG\x1b[31m", later)
	long := scheduleAt(t, node, "blob", strings.Repeat("ab", 5000), later)
	srv := serveCluster(t, node)

	_, body := get(t, srv+"/cluster/task?id="+binary)
	mustContain(t, body, "11 bytes, not printable text: hex dump", "00000000  00 01 ff 50 4e 47 1b 5b  33 31 6d")
	if strings.Contains(body, "\x1b") || strings.Contains(body, "\x00") {
		t.Error("control bytes of a binary payload reached the page")
	}

	_, body = get(t, srv+"/cluster/task?id="+long)
	mustContain(t, body, "10000 bytes", `id="payload-all"`)
	if strings.Contains(body, strings.Repeat("ab", 2500)) {
		t.Error("a 10,000-byte payload is shown whole without asking")
	}
	_, body = get(t, srv+"/cluster/task?id="+long+"&payload=all")
	mustContain(t, body, strings.Repeat("ab", 5000))
	if strings.Contains(body, `id="payload-all"`) {
		t.Error("the whole payload still offers to show all")
	}
}

func TestClusterPagesEscapeKindPayloadAndError(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	const kind = `<script>alert("kind")</script>`
	const payload = `<script>alert("payload")</script>`
	const errText = `<script>alert("error")</script>`
	id := scheduleAt(t, node, kind, payload, time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, kind, 1, errText)
	srv := serveCluster(t, node)

	escaped := html.EscapeString // as html/template escapes text
	for _, path := range []string{"/cluster/", "/cluster/tasks?state=dead", "/cluster/task?id=" + url.QueryEscape(id), "/cluster/task?id=" + url.QueryEscape(id) + "&msg=" + url.QueryEscape(errText)} {
		code, body := get(t, srv+path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("%s: a raw <script> reached the page:\n%s", path, body)
		}
		mustContain(t, body, escaped(kind), escaped(errText))
		if strings.Contains(path, "task?") {
			mustContain(t, body, escaped(payload))
		}
	}
}

// postAction posts an action form with the page's token and returns where
// it redirects and the page there.
func postAction(t *testing.T, srv, token, action string, form url.Values) (int, string) {
	t.Helper()
	form.Set("csrf", token)
	code, body, resp := postWith(t, noRedirect, srv+"/cluster/"+action, form, nil)
	if code != http.StatusSeeOther {
		return code, body
	}
	loc, err := resp.Location()
	if err != nil {
		t.Fatal(err)
	}
	_, body = get(t, loc.String())
	return code, body
}

func TestClusterActionsChangeTheStore(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	later := time.Now().Add(time.Hour).Truncate(time.Second)
	first := scheduleAt(t, node, "email", "", later)
	toRunNow := scheduleAt(t, node, "email", "", later.Add(time.Minute))
	toMove := scheduleAt(t, node, "email", "", later.Add(2*time.Minute))
	toCancel := scheduleAt(t, node, "email", "", later.Add(3*time.Minute))
	toRetry := scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	toDelete := scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "charge", 2, "declined")
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/task?id="+toRunNow)
	token := csrfOf(t, body)

	// Run now: the task goes to the head of the pending tasks, before
	// the one due earlier.
	if code, body := postAction(t, srv, token, "run-now", url.Values{"id": {toRunNow}}); code != http.StatusSeeOther || !strings.Contains(body, "task "+toRunNow+" runs now") {
		t.Errorf("run now: %d %q", code, body)
	}
	page, err := node.List(context.Background(), cluster.ListQuery{State: cluster.Pending, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if page.Tasks[0].ID != toRunNow || page.Tasks[1].ID != first {
		t.Errorf("after run now, pending starts with %s, %s; want %s, %s", page.Tasks[0].ID, page.Tasks[1].ID, toRunNow, first)
	}

	// Reschedule: the field is UTC.
	at := later.Add(24 * time.Hour).UTC()
	if code, body := postAction(t, srv, token, "reschedule", url.Values{"id": {toMove}, "at": {at.Format("2006-01-02T15:04:05")}}); code != http.StatusSeeOther || !strings.Contains(body, "rescheduled to") {
		t.Errorf("reschedule: %d %q", code, body)
	}
	if info, _ := getInfo(t, node, toMove); !info.Due.Equal(at) {
		t.Errorf("rescheduled task due %v, want %v", info.Due, at)
	}

	// Cancel a pending task, retry a dead one, delete another. Cancel
	// and delete ask first, naming the task, and do nothing until
	// confirmed.
	for action, id := range map[string]string{"cancel": toCancel, "delete": toDelete} {
		code, body := postAction(t, srv, token, action, url.Values{"id": {id}})
		if code != http.StatusOK || !strings.Contains(body, "task "+id+"?") || !strings.Contains(body, `name="confirmed" value="1"`) {
			t.Errorf("%s without confirmation: %d, want the confirmation page naming %s", action, code, id)
		}
		if _, ok := getInfo(t, node, id); !ok {
			t.Errorf("%s without confirmation removed the task", action)
		}
	}
	if code, body := postAction(t, srv, token, "cancel", url.Values{"id": {toCancel}, "confirmed": {"1"}}); code != http.StatusSeeOther || !strings.Contains(body, "task "+toCancel+" canceled") {
		t.Errorf("cancel: %d %q", code, body)
	}
	if _, ok := getInfo(t, node, toCancel); ok {
		t.Error("the canceled task is still stored")
	}
	if code, body := postAction(t, srv, token, "retry", url.Values{"id": {toRetry}}); code != http.StatusSeeOther || !strings.Contains(body, `<span id="state" class="state-pending">pending</span>`) {
		t.Errorf("retry: %d %q", code, body)
	}
	if info, _ := getInfo(t, node, toRetry); info.State != cluster.Pending || info.Attempt != 0 {
		t.Errorf("retried task %+v, want pending with no failed run", info)
	}
	if code, _ := postAction(t, srv, token, "delete", url.Values{"id": {toDelete}, "confirmed": {"1"}}); code != http.StatusSeeOther {
		t.Errorf("delete: %d", code)
	}
	if _, ok := getInfo(t, node, toDelete); ok {
		t.Error("the deleted task is still stored")
	}

	// An action the state forbids is refused with the cluster's reason,
	// as an error (409 Conflict, 404 Not Found), and changes nothing.
	if code, body := postAction(t, srv, token, "retry", url.Values{"id": {first}}); code != http.StatusConflict || !strings.Contains(body, "the task is pending") || !strings.Contains(body, `class="flash flash-error"`) {
		t.Errorf("retry of a pending task: %d, page says %q", code, body)
	}
	for _, confirmed := range []string{"", "1"} {
		if code, body := postAction(t, srv, token, "delete", url.Values{"id": {"no-such-task"}, "confirmed": {confirmed}}); code != http.StatusNotFound || !strings.Contains(body, "no such task") || !strings.Contains(body, `class="flash flash-error"`) {
			t.Errorf("delete of an unknown task: %d, page says %q", code, body)
		}
	}
	if info, _ := getInfo(t, node, first); info.State != cluster.Pending {
		t.Errorf("a refused retry changed the task: %+v", info)
	}
}

func TestClusterActionsNeedTheTokenAndAreOffWhenReadOnly(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "email", "", time.Now().Add(time.Hour))
	srv := serveCluster(t, node)
	for _, token := range []string{"", strings.Repeat("0", 64)} {
		for _, action := range []string{"run-now", "reschedule", "cancel", "retry", "delete", "pause", "resume"} {
			if resp := post(t, srv+"/cluster/"+action, url.Values{"csrf": {token}, "id": {id}, "at": {"2030-01-01T00:00:00"}, "kind": {"email"}}); resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s with token %q: %d, want 403", action, token, resp.StatusCode)
			}
		}
	}
	if code, _ := get(t, srv+"/cluster/cancel?id="+id); code != http.StatusMethodNotAllowed {
		t.Errorf("GET cancel: %d, want 405", code)
	}

	ro := serveCluster(t, node, dashboard.ReadOnly())
	_, body := get(t, ro+"/cluster/task?id="+id)
	mustContain(t, body, "read-only", `<span id="state" class="state-pending">pending</span>`)
	if strings.Contains(body, `method="post"`) {
		t.Error("a read-only task page has an action form")
	}
	if resp := post(t, ro+"/cluster/cancel", url.Values{"id": {id}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cancel on a read-only dashboard: %d, want 403", resp.StatusCode)
	}
	if _, ok := getInfo(t, node, id); !ok {
		t.Error("the task was canceled without the token or on a read-only dashboard")
	}
	if paused, err := node.PausedKinds(context.Background()); err != nil || len(paused) > 0 {
		t.Errorf("paused kinds %v (%v) after refused pauses", paused, err)
	}
}

func TestClusterBadInputGets400AndAFailingStore502(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "email", "", time.Now().Add(time.Hour))
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/task?id="+id)
	token := csrfOf(t, body)
	for path, want := range map[string]string{
		"/cluster/tasks?state=bogus":           "unknown state",
		"/cluster/tasks?state=dead&cursor=zzz": "malformed cursor",
		"/cluster/tasks?limit=0":               "limit &#34;0&#34;: must be a whole number from 1 to 1000",
		"/cluster/task?id=":                    "task id: is empty",
	} {
		if code, body := get(t, srv+path); code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want 400 saying %q", path, code, want)
		}
	}
	if code, _ := postAction(t, srv, token, "reschedule", url.Values{"id": {id}, "at": {"tomorrow"}}); code != http.StatusBadRequest {
		t.Errorf("reschedule to %q: %d, want 400", "tomorrow", code)
	}

	closed := startRedis(t)
	gone := newNode(t, closed)
	_ = closed.Close()
	srv = serveCluster(t, gone)
	if code, body := get(t, srv+"/cluster/"); code != http.StatusBadGateway || !strings.Contains(body, "closed") {
		t.Errorf("overview with a closed client: %d, want 502 with the cause\n%s", code, body)
	}
}

func TestClusterOnlyDashboardStartsAtTheClusterPages(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	srv := serveCluster(t, node)
	resp := post(t, srv+"/", nil) // no such route: the POST is refused
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
	code, _ := get(t, srv+"/")
	if code != http.StatusSeeOther {
		t.Fatalf("GET /: %d, want 303 to cluster/", code)
	}
	_, body := get(t, srv+"/cluster/")
	if strings.Contains(body, ">Queue<") {
		t.Error("a dashboard without a Scheduler links to the queue")
	}
	if code, _ := get(t, srv+"/queue"); code != http.StatusNotFound {
		t.Errorf("GET queue without a Scheduler: %d, want 404", code)
	}
}

func TestNewRejectsBadClusterArguments(t *testing.T) {
	for name, call := range map[string]func() error{
		"nil scheduler, no cluster": func() error { _, err := dashboard.New(nil, dashboard.ReadOnly()); return err },
		"nil node":                  func() error { _, err := dashboard.New(nil, dashboard.WithCluster(nil)); return err },
		"page size 0":               func() error { _, err := dashboard.New(newScheduler(t), dashboard.WithPageSize(0)); return err },
		"page size past MaxPage": func() error {
			_, err := dashboard.New(newScheduler(t), dashboard.WithPageSize(cluster.MaxPage+1))
			return err
		},
	} {
		if err := call(); !errors.Is(err, dashboard.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}
