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

	"github.com/go-stpe/scheduler/schedulertest"
)

// TestMain fails the test if the program leaves a goroutine behind: the
// server, the scheduler and the pipeline are all stopped by close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServesMetrics starts the program in-process on 127.0.0.1:0 with a
// manual clock, lets 6 s pass, scrapes /metrics over HTTP and finds the
// series with the counts the jobs made: heartbeat at 1..6 s, report at 2, 4
// and 6 s (the third fails), cleanup once, jittered, between 5 and 6 s.
func TestServesMetrics(t *testing.T) {
	ctx := context.Background()
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d, err := start("127.0.0.1:0", clk)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.close(ctx)) }()
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, clk, d.s, 6*time.Second))

	families := scrape(t, "http://"+d.addr+"/metrics")

	runs := counts(t, families["scheduler_task_runs_total"], "scheduler_task_name", "scheduler_run_outcome")
	assert.Equal(t, map[string]float64{
		"heartbeat/ok": 6,
		"report/ok":    2,
		"report/error": 1,
		"cleanup/ok":   1,
	}, runs)

	duration := families["scheduler_task_run_duration_seconds"]
	require.NotNil(t, duration, "duration histogram")
	assert.Equal(t, dto.MetricType_HISTOGRAM, duration.GetType())
	lateness := families["scheduler_task_run_lateness_seconds"]
	require.NotNil(t, lateness, "lateness histogram")
	for _, m := range lateness.GetMetric() {
		assert.Zero(t, m.GetHistogram().GetSampleSum(), "on a manual clock that steps to each timer no run is late, jitter or not")
	}

	for name, want := range map[string]float64{
		"scheduler_queue_length":        3,
		"scheduler_task_active":         0,
		"scheduler_worker_count":        2,
		"scheduler_task_rejected_total": 0,
		"scheduler_task_canceled_total": 0,
	} {
		f := families[name]
		require.NotNil(t, f, name)
		require.Len(t, f.GetMetric(), 1, name)
		m := f.GetMetric()[0]
		assert.Equal(t, "demo", label(m, "scheduler_name"), name)
		assert.Equal(t, want, m.GetGauge().GetValue()+m.GetCounter().GetValue(), name)
	}
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

// counts returns a counter family's values keyed by the values of two
// labels, "a/b".
func counts(t *testing.T, f *dto.MetricFamily, a, b string) map[string]float64 {
	t.Helper()
	require.NotNil(t, f)
	require.Equal(t, dto.MetricType_COUNTER, f.GetType())
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
