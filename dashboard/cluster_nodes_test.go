package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cron"
)

// Tests of the cluster's nodes and periodic tasks pages.

func TestClusterNodesPageListsTheLiveNodes(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	worker := startWorker(t, rdb, "email", func(context.Context, cluster.Task) error { return nil })
	srv := serveCluster(t, node)

	var members []cluster.Member
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		members, err = node.Members(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The record shows the worker's share from its second renewal,
		// which its first asks for at once.
		if len(members) != 1 || members[0].Owned == cluster.DefaultPartitions || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(members) != 1 || members[0].Name != worker.Name() {
		t.Fatalf("Members says %+v, want the one worker %s", members, worker.Name())
	}
	m := members[0]
	_, body := get(t, srv+"/cluster/nodes")
	mustContain(t, body,
		fmt.Sprintf(`<tr id="node-%s">`, m.Name),
		fmt.Sprintf("<td>%s</td><td>%d</td>", m.Host, os.Getpid()),
		`<td class="kinds">email</td>`,
		// The one worker owns every partition for its kind.
		fmt.Sprintf(`<td class="partitions">%d + 0</td>`, cluster.DefaultPartitions),
		// The dashboard's own node is never started here: it says so.
		`<span id="health">node not started</span>`)

	stopWorker(t, worker)
	_, body = get(t, srv+"/cluster/nodes")
	if strings.Contains(body, "node-"+m.Name) {
		t.Error("a stopped node is still listed")
	}
}

func TestClusterPeriodicPageShowsNextDueAndLastRun(t *testing.T) {
	rdb := startRedis(t)
	node := newNode(t, rdb)
	srv := serveCluster(t, node)
	every, err := cron.Parse("@every 1s")
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{}, 1)
	// A lease longer than the test, so the declaration outlives the
	// worker's stop while the page is read.
	worker, err := cluster.New(rdb, cluster.WithLease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Periodic("refresh-rates", every, func(context.Context, cluster.Task) error {
		select {
		case ran <- struct{}{}:
		default:
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(worker.StopNow)
	<-ran
	stopWorker(t, worker) // waits for the run's record

	tasks, err := node.PeriodicTasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].LastRun == nil {
		t.Fatalf("PeriodicTasks says %+v, want refresh-rates with a last run", tasks)
	}
	p := tasks[0]
	_, body := get(t, srv+"/cluster/periodic")
	mustContain(t, body,
		`<a href="tasks?state=pending&amp;kind=%40refresh-rates">refresh-rates</a>`,
		`<td class="trigger">@every 1s</td>`,
		`<td class="next"><time datetime="`+p.Next.UTC().Format(time.RFC3339Nano)+`">`+p.Next.UTC().Format("2006-01-02 15:04:05")+" UTC</time>",
		"due <time datetime=\""+p.LastRun.Due.UTC().Format(time.RFC3339Nano)+"\">"+p.LastRun.Due.UTC().Format("2006-01-02 15:04:05")+" UTC</time>",
		", on "+worker.Name(),
		`<td class="outcome outcome-succeeded">succeeded</td>`,
		`<input type="hidden" name="kind" value="@refresh-rates">`)

	// Pause from its row: the occurrences' kind is paused, and the page
	// comes back with Resume.
	token := csrfOf(t, body)
	code, body := postAction(t, srv, token, "pause", url.Values{"kind": {"@refresh-rates"}, "back": {"periodic"}})
	if code != http.StatusSeeOther {
		t.Fatalf("pause: %d", code)
	}
	mustContain(t, body, "kind @refresh-rates paused", `<span class="tag">paused</span>`, `action="resume"`)
}
