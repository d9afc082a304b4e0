package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/dashboard"
)

// Bulk actions from a listing: ticked rows or every task matching, always
// confirmed with the count first.

func countsOf(t *testing.T, node *cluster.Node, kind string) cluster.Counts {
	t.Helper()
	_, kinds, err := node.CountsByKind(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if k.Kind == kind {
			return k.Counts
		}
	}
	return cluster.Counts{}
}

func TestClusterBulkRetryOfEveryMatchingTaskAsksWithTheCountFirst(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	for range 5 {
		scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	}
	scheduleAt(t, node, "resize", "", time.Now(), cluster.WithTaskMaxRetries(0))
	killTasks(t, rdb, "charge", 5, "declined")
	killTasks(t, rdb, "resize", 1, "bad image")
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/tasks?state=dead&kind=charge")
	mustContain(t, body, `id="bulk-retry"`, `id="bulk-delete"`, `id="bulk-cancel"`, `all <span id="all-count">5</span> dead tasks of kind charge`)
	token := csrfOf(t, body)
	form := url.Values{"state": {"dead"}, "kind": {"charge"}, "action": {"retry"}, "scope": {"all"}}
	code, body := postAction(t, srv, token, "bulk", form)
	if code != http.StatusOK {
		t.Fatalf("bulk retry without confirmation: %d", code)
	}
	mustContain(t, body, "Retry 5 dead tasks of kind charge?", `name="confirmed" value="1"`, `name="before"`)
	if c := countsOf(t, node, "charge"); c.Dead != 5 {
		t.Fatalf("the confirmation page acted: %+v", c)
	}
	before := regexpValue(t, body, "before")
	form.Set("confirmed", "1")
	form.Set("before", before)
	code, body = postAction(t, srv, token, "bulk", form)
	if code != http.StatusSeeOther {
		t.Fatalf("confirmed bulk retry: %d %s", code, body)
	}
	mustContain(t, body, `class="flash flash-ok"`, "retry: 5 of 5 matching dead tasks of kind charge")
	if c := countsOf(t, node, "charge"); c.Dead != 0 || c.Pending != 5 {
		t.Errorf("after the bulk retry charge counts %+v, want 5 pending", c)
	}
	if c := countsOf(t, node, "resize"); c.Dead != 1 {
		t.Errorf("the bulk retry of charge touched resize: %+v", c)
	}
}

func TestClusterBulkDeleteOfTickedRows(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	var ids []string
	for range 4 {
		ids = append(ids, scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0)))
	}
	killTasks(t, rdb, "charge", 4, "declined")
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/tasks?state=dead")
	mustContain(t, body, `<input type="checkbox" name="id" value="`+ids[0]+`" form="bulk"`)
	token := csrfOf(t, body)
	form := url.Values{"state": {"dead"}, "action": {"delete"}, "scope": {"ticked"}, "id": {ids[0], ids[2]}}
	code, body := postAction(t, srv, token, "bulk", form)
	if code != http.StatusOK || !strings.Contains(body, "Delete 2 dead tasks?") || !strings.Contains(body, "cannot be undone") {
		t.Fatalf("bulk delete of 2: %d, want the confirmation counting 2", code)
	}
	form.Set("confirmed", "1")
	if code, body := postAction(t, srv, token, "bulk", form); code != http.StatusSeeOther || !strings.Contains(body, "delete: 2 of 2 matching dead tasks") {
		t.Fatalf("confirmed bulk delete: %d %s", code, body)
	}
	for i, id := range ids {
		_, ok := getInfo(t, node, id)
		if want := i == 1 || i == 3; ok != want {
			t.Errorf("task %d stored %v after deleting tasks 0 and 2", i, ok)
		}
	}
}

func TestClusterBulkRefusesWhatItCannotDo(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	id := scheduleAt(t, node, "email", "", time.Now().Add(time.Hour))
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/tasks?state=pending")
	token := csrfOf(t, body)
	for what, c := range map[string]struct {
		form url.Values
		code int
		says string
	}{
		"retry of pending":  {url.Values{"state": {"pending"}, "action": {"retry"}, "scope": {"all"}}, http.StatusBadRequest, "not an action on pending tasks"},
		"nothing ticked":    {url.Values{"state": {"pending"}, "action": {"cancel"}, "scope": {"ticked"}}, http.StatusBadRequest, "no task selected"},
		"no dead task":      {url.Values{"state": {"dead"}, "action": {"delete"}, "scope": {"all"}}, http.StatusConflict, "no dead task matches now"},
		"bad before":        {url.Values{"state": {"pending"}, "action": {"cancel"}, "scope": {"all"}, "before": {"x"}}, http.StatusBadRequest, "not a time"},
		"an unknown action": {url.Values{"state": {"pending"}, "action": {"explode"}, "id": {id}}, http.StatusBadRequest, "not an action"},
	} {
		code, body := postAction(t, srv, token, "bulk", c.form)
		if code != c.code || !strings.Contains(body, c.says) || !strings.Contains(body, "flash-error") {
			t.Errorf("%s: %d, want %d saying %q", what, code, c.code, c.says)
		}
	}
	// The token and read-only rules hold as for every action.
	form := url.Values{"state": {"pending"}, "action": {"cancel"}, "id": {id}, "confirmed": {"1"}}
	if code, _ := postAction(t, srv, "00", "bulk", form); code != http.StatusForbidden {
		t.Errorf("bulk with a wrong token: %d, want 403", code)
	}
	ro := serveCluster(t, node, dashboard.ReadOnly())
	_, body = get(t, ro+"/cluster/tasks?state=pending")
	if strings.Contains(body, `id="bulk"`) || strings.Contains(body, `type="checkbox"`) {
		t.Error("a read-only listing offers bulk actions")
	}
	if code, _ := postAction(t, ro, token, "bulk", form); code != http.StatusForbidden {
		t.Errorf("bulk on a read-only dashboard: %d, want 403", code)
	}
	if _, ok := getInfo(t, node, id); !ok {
		t.Error("a refused bulk cancel removed the task")
	}
}

// regexpValue returns the value of the hidden field name in a page.
func regexpValue(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no field %s in the page", name)
	}
	return m[1]
}

func TestClusterBulkRunNowAndCancelOfPendingTasks(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	var ids []string
	for range 3 {
		ids = append(ids, scheduleAt(t, node, "report", "", time.Now().Add(time.Hour)))
	}
	srv := serveCluster(t, node)
	_, body := get(t, srv+"/cluster/tasks?state=pending&kind=report")
	mustContain(t, body, `id="bulk-run-now"`, `id="bulk-cancel"`)
	token := csrfOf(t, body)
	form := url.Values{"state": {"pending"}, "kind": {"report"}, "action": {"run now"}, "scope": {"all"}}
	if code, body := postAction(t, srv, token, "bulk", form); code != http.StatusOK || !strings.Contains(body, "Run now 3 pending tasks of kind report?") {
		t.Fatalf("bulk run now: %d, want the confirmation counting 3", code)
	}
	form.Set("confirmed", "1")
	if code, body := postAction(t, srv, token, "bulk", form); code != http.StatusSeeOther || !strings.Contains(body, "run now: 3 of 3 matching pending tasks of kind report") {
		t.Fatalf("confirmed bulk run now: %d", code)
	}
	for _, id := range ids {
		if info, _ := getInfo(t, node, id); time.Until(info.NextRun) > time.Minute {
			t.Errorf("task %s runs next at %v, want now", id, info.NextRun)
		}
	}
	form = url.Values{"state": {"pending"}, "action": {"cancel"}, "id": {ids[1]}, "confirmed": {"1"}}
	if code, body := postAction(t, srv, token, "bulk", form); code != http.StatusSeeOther || !strings.Contains(body, "cancel: 1 of 1 matching pending task") {
		t.Fatalf("bulk cancel of one: %d", code)
	}
	if _, ok := getInfo(t, node, ids[1]); ok {
		t.Error("the canceled task is still stored")
	}
}
