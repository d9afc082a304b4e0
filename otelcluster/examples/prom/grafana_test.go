package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster/internal/redisserver"
)

// grafanaDashboard is the part of docs/grafana-cluster.json the test reads.
type grafanaDashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// metricName finds the metric and label names of this project (and the
// database latency's) in a PromQL expression.
var metricName = regexp.MustCompile(`\b(?:scheduler_cluster|db_client)_[a-z_]+\b`)

// TestGrafanaDashboardQueriesMetricsTheNodesExport parses the Grafana
// dashboard of the docs and checks that every metric its panels query is
// one an instrumented node serves to Prometheus, of the right type (a
// histogram's _bucket series from a histogram), and that the pending
// depth, the oldest overdue task and the lost runs are queried from
// their metrics. A task stored before the node starts makes its first
// sample of the pending tasks (at its start) report the pending gauges.
func TestGrafanaDashboardQueriesMetricsTheNodesExport(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/grafana-cluster.json")
	require.NoError(t, err)
	var dash grafanaDashboard
	require.NoError(t, json.Unmarshal(raw, &dash))
	require.NotEmpty(t, dash.Panels)
	var exprs []string
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, want := range []string{
		"scheduler_cluster_task_pending{",
		"scheduler_cluster_task_oldest_overdue_seconds{",
		`scheduler_cluster_run_outcome="lost"`,
	} {
		assert.Contains(t, all, want, "the dashboard's queries")
	}

	addr := redisserver.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	seed, err := cluster.New(rdb, cluster.WithPrefix("{otelcluster-demo}")) // the demo's
	require.NoError(t, err)
	_, err = seed.Schedule(context.Background(), "mail", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	seed.StopNow()
	d := startDemoOn(t, addr)
	var families map[string]*dto.MetricFamily
	for deadline := time.Now().Add(30 * time.Second); ; {
		families = scrape(t, "http://"+d.addr+"/metrics")
		if families["scheduler_cluster_task_run_lateness_seconds"] != nil && families["scheduler_cluster_task_runs_total"] != nil &&
			families["scheduler_cluster_task_pending"] != nil {
			break
		}
		require.False(t, time.Now().After(deadline), "no runs and no pending sample reported within 30 s")
		time.Sleep(50 * time.Millisecond) // the scrape is polled: the metrics live behind HTTP
	}

	for _, name := range []string{"scheduler_cluster_task_pending", "scheduler_cluster_task_oldest_overdue_seconds"} {
		f := families[name]
		require.NotNil(t, f, name)
		assert.Equal(t, dto.MetricType_GAUGE, f.GetType(), name)
	}
	pending := map[string]float64{}
	for _, m := range families["scheduler_cluster_task_pending"].GetMetric() {
		pending[label(m, "scheduler_cluster_task_kind")] = m.GetGauge().GetValue()
	}
	assert.GreaterOrEqual(t, pending["mail"], 1.0, "the mail task due in an hour: %v", pending)

	labels := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
	}
	queried := 0
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q", p.Title)
		for _, target := range p.Targets {
			metrics := 0
			for _, name := range metricName.FindAllString(target.Expr, -1) {
				family, histogram := name, false
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if base, ok := strings.CutSuffix(name, suffix); ok && families[base] != nil {
						family, histogram = base, true
					}
				}
				f := families[family]
				switch {
				case f != nil:
					metrics++
					if histogram {
						assert.Equal(t, dto.MetricType_HISTOGRAM, f.GetType(), name)
					}
				case !labels[name]:
					t.Errorf("panel %q queries %s, which is no metric or label a node exports", p.Title, name)
				}
			}
			assert.NotZero(t, metrics, "panel %q: no metric in %s", p.Title, target.Expr)
			queried += metrics
		}
	}
	assert.GreaterOrEqual(t, queried, 5)
}
