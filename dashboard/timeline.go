package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The cluster's per-minute history (Node.Timeline), charted on the cluster
// overview (all kinds) and on a kind's listing: runs, failures and lost
// runs, start lateness p50 and p99, the pending depth and the age of the
// oldest overdue pending task, over the last hour unless ?span= asks for
// 6 or 24 hours.

// timelineSpans are the spans offered, the first the default.
var timelineSpans = []string{"1h", "6h", "24h"}

// timelineView is the charts of one kind's (or every kind's) timeline.
type timelineView struct {
	Kind   string
	Span   string
	Spans  []spanLink
	Charts []chart
	Empty  bool // no run ended and no task was pending in the span
	// Runs, Failed and Lost add up the span's minutes.
	Runs, Failed, Lost int
}

// spanLink is the link to the same page over another span.
type spanLink struct {
	Span, Href string
}

// timelineSpan reads ?span=: one of timelineSpans, else an error.
func timelineSpan(r *http.Request) (string, time.Duration, error) {
	v := r.URL.Query().Get("span")
	if v == "" {
		v = timelineSpans[0]
	}
	for _, s := range timelineSpans {
		if s == v {
			d, _ := time.ParseDuration(s)
			return s, d, nil
		}
	}
	return "", 0, fmt.Errorf("%w: span %q: must be 1h, 6h or 24h", ErrInvalidArgument, v)
}

// timeline reads kind's timeline ("" for every kind) over span and draws
// it; page is the query of the page it is on, for the span links.
func (h *Handler) timeline(ctx context.Context, kind, span string, d time.Duration, page url.Values) (timelineView, error) {
	v := timelineView{Kind: kind, Span: span}
	for _, s := range timelineSpans {
		q := url.Values{}
		for k, vs := range page {
			q[k] = vs
		}
		q.Set("span", s)
		v.Spans = append(v.Spans, spanLink{Span: s, Href: "?" + q.Encode() + "#timeline"})
	}
	mins, err := h.cfg.node.Timeline(ctx, kind, time.Now().Add(-d))
	if err != nil {
		return v, err
	}
	v.Empty = true
	for _, m := range mins {
		if m.Runs > 0 || m.Pending > 0 {
			v.Empty = false
		}
		v.Runs += m.Runs
		v.Failed += m.Failed
		v.Lost += m.Lost
	}
	xs := make([]time.Time, len(mins))
	pick := func(f func(cluster.Minute) float64) []float64 {
		out := make([]float64, len(mins))
		for i, m := range mins {
			out[i] = f(m)
		}
		return out
	}
	for i, m := range mins {
		xs[i] = m.Start
	}
	perMinute := func(v float64) string { return trimFloat(v) + "/min" }
	count := func(v float64) string { return trimFloat(v) }
	v.Charts = []chart{
		newChart("tl-runs", "Runs, failures and lost runs per minute", xs, false, perMinute,
			series{"runs", "line-a", pick(func(m cluster.Minute) float64 { return float64(m.Runs) })},
			series{"failed", "line-bad", pick(func(m cluster.Minute) float64 { return float64(m.Failed) })},
			series{"lost", "line-c", pick(func(m cluster.Minute) float64 { return float64(m.Lost) })}),
		newChart("tl-lateness", "Start lateness", xs, true, durationText,
			series{"p50", "line-a", pick(func(m cluster.Minute) float64 { return float64(m.LatenessP50) })},
			series{"p99", "line-b", pick(func(m cluster.Minute) float64 { return float64(m.LatenessP99) })}),
		newChart("tl-pending", "Pending tasks, sampled once a minute", xs, false, count,
			series{"pending", "line-a", pick(func(m cluster.Minute) float64 { return float64(m.Pending) })}),
		newChart("tl-overdue", "Oldest overdue pending task", xs, true, durationText,
			series{"age", "line-b", pick(func(m cluster.Minute) float64 { return float64(m.OldestOverdue) })}),
	}
	return v, nil
}
