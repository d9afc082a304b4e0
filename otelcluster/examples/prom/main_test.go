package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster/internal/redisserver"
)

// TestMain fails the test if the program leaves a goroutine behind: the
// server, the node and the pipelines are all stopped by close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServesMetrics starts the program in-process on 127.0.0.1:0 against
// its own redis-server, with a tick of 100 ms, scrapes /metrics over HTTP
// until three reports have run (the third fails once and is retried), and
// finds every series otelcluster reports.
func TestServesMetrics(t *testing.T) {
	d := startDemo(t)

	var families map[string]*dto.MetricFamily
	deadline := time.Now().Add(30 * time.Second)
	for {
		families = scrape(t, "http://"+d.addr+"/metrics")
		runs := values(families["scheduler_cluster_task_runs_total"], "scheduler_cluster_task_kind", "scheduler_cluster_run_outcome")
		if runs["report/failed"] >= 1 && runs["report/succeeded"] >= 3 {
			break
		}
		require.Falsef(t, time.Now().After(deadline), "no failed and retried report within 30 s: %v", runs)
		time.Sleep(50 * time.Millisecond) // the scrape is polled: the metrics live behind HTTP
	}

	scheduled := values(families["scheduler_cluster_task_scheduled_total"], "scheduler_cluster_task_kind", "")
	assert.GreaterOrEqual(t, scheduled["@tick/"], 1.0)
	assert.GreaterOrEqual(t, scheduled["mail/"], 1.0)
	assert.GreaterOrEqual(t, scheduled["report/"], 3.0)
	claimed := values(families["scheduler_cluster_task_claimed_total"], "scheduler_cluster_task_kind", "")
	assert.GreaterOrEqual(t, claimed["report/"], 4.0, "three first runs and a retry")
	for _, name := range []string{"scheduler_cluster_task_run_duration_seconds", "scheduler_cluster_task_run_lateness_seconds", "db_client_operation_duration_seconds"} {
		f := families[name]
		require.NotNil(t, f, name)
		assert.Equal(t, dto.MetricType_HISTOGRAM, f.GetType(), name)
	}
	scripts := map[string]bool{}
	for _, m := range families["db_client_operation_duration_seconds"].GetMetric() {
		assert.Equal(t, "redis", label(m, "db_system_name"))
		scripts[label(m, "db_stored_procedure_name")] = true
	}
	for _, s := range []string{"schedule", "claim", "complete", "fail", "members"} {
		assert.True(t, scripts[s], "Redis latency of the %s script", s)
	}
	for _, name := range []string{"scheduler_cluster_task_active", "scheduler_cluster_window_length"} {
		f := families[name]
		require.NotNil(t, f, name)
		assert.Equal(t, dto.MetricType_GAUGE, f.GetType(), name)
	}
}

// startDemo starts the program in-process on 127.0.0.1:0 against its own
// redis-server, with a tick of 100 ms, and closes it when t ends.
func startDemo(t *testing.T) *demo {
	t.Helper()
	return startDemoOn(t, redisserver.Start(t))
}

// startDemoOn is startDemo on the redis-server at addr.
func startDemoOn(t *testing.T, addr string) *demo {
	t.Helper()
	d, err := start("127.0.0.1:0", config{redisAddr: addr, tick: 100 * time.Millisecond, nodeOpts: []cluster.Option{
		cluster.WithWindow(5 * time.Second), cluster.WithSweepInterval(time.Second),
	}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.close(context.Background())) })
	return d
}

// scrape GETs url and parses the Prometheus text it serves.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "%s", body)
	return families
}

// values returns a counter family's values keyed by the values of two
// labels, "a/b" (b may be "", for one label).
func values(f *dto.MetricFamily, a, b string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		out[label(m, a)+"/"+label(m, b)] = m.GetCounter().GetValue()
	}
	return out
}

// label returns the value of a metric's label, or "".
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
