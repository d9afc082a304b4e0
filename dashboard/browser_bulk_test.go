package dashboard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/go-stpe/scheduler/cluster"
)

// TestBrowserRetriesAHundredDeadTasksInBulk: a hundred dead tasks of a
// kind, "all 100 matching", Retry, the confirmation says 100, confirm:
// Redis holds them pending. Then two ticked rows of another kind are
// deleted the same way.
func TestBrowserRetriesAHundredDeadTasksInBulk(t *testing.T) {
	browser := newBrowser(t)
	rdb := startRedis(t)
	node := newNode(t, rdb)
	for range 100 {
		scheduleAt(t, node, "charge", "", time.Now(), cluster.WithTaskMaxRetries(0))
	}
	var resize []string
	for range 3 {
		resize = append(resize, scheduleAt(t, node, "resize", "", time.Now(), cluster.WithTaskMaxRetries(0)))
	}
	killTasks(t, rdb, "charge", 100, "card declined")
	killTasks(t, rdb, "resize", 3, "bad image")
	base := serveBoth(t, nil, node) + "/cluster/"
	text := func(sel string) string {
		t.Helper()
		return textOf(t, browser, sel)
	}
	if err := chromedp.Do(browser,
		// A page of 10: "all 100 matching" reaches past the page.
		chromedp.Navigate(base+"tasks?state=dead&kind=charge&limit=10"),
		chromedp.WaitVisible(chromedp.CSS("#bulk-retry")),
		chromedp.Click(chromedp.CSS("#scope-all")),
	); err != nil {
		t.Fatal(err)
	}
	if rows, all := text("#shown"), text("#all-count"); rows != "10" || all != "100" {
		t.Errorf("the page shows %s rows and offers all %s; want 10 and 100", rows, all)
	}
	screenshotTo(t, browser, "DASHBOARD_BULK_SCREENSHOT")
	if err := chromedp.Do(browser,
		chromedp.Click(chromedp.CSS("#bulk-retry")),
		chromedp.WaitVisible(chromedp.CSS("#confirm")),
	); err != nil {
		t.Fatal(err)
	}
	if q := text("#confirm-question"); q != "Retry 100 dead tasks of kind charge?" {
		t.Errorf("the confirmation asks %q", q)
	}
	if c := countsOf(t, node, "charge"); c.Dead != 100 {
		t.Fatalf("acted before the confirmation: %+v", c)
	}
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#flash"))); err != nil {
		t.Fatal(err)
	}
	if msg := text("#flash.flash-ok"); msg != "retry: 100 of 100 matching dead tasks of kind charge" {
		t.Errorf("after the bulk retry the page says %q", msg)
	}
	if c := countsOf(t, node, "charge"); c.Dead != 0 || c.Pending != 100 {
		t.Errorf("after the bulk retry charge counts %+v, want 100 pending", c)
	}
	if got := text("#tab-pending .count"); got != "100" {
		t.Errorf("the pending tab counts %s", got)
	}

	// Two ticked rows of resize, deleted.
	if err := chromedp.Do(browser,
		chromedp.Navigate(base+"tasks?state=dead&kind=resize"),
		chromedp.WaitVisible(chromedp.CSS("#bulk-delete")),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[value="%s"]`, resize[0]))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[value="%s"]`, resize[2]))),
		chromedp.Click(chromedp.CSS("#bulk-delete")),
		chromedp.WaitVisible(chromedp.CSS("#confirm")),
	); err != nil {
		t.Fatal(err)
	}
	if q := text("#confirm-question"); q != "Delete 2 dead tasks of kind resize?" {
		t.Errorf("the confirmation asks %q", q)
	}
	if err := chromedp.Do(browser, chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#flash"))); err != nil {
		t.Fatal(err)
	}
	for i, id := range resize {
		_, ok, err := node.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if want := i == 1; ok != want {
			t.Errorf("resize task %d stored %v after deleting 0 and 2", i, ok)
		}
	}
}
