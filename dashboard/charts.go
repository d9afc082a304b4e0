package dashboard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
)

// Charts: inline SVG line charts drawn on the server, with a time axis
// (ticks relative to the last point: "-4m" … "now") and a value axis with
// labelled grid lines. A chart of durations (lateness p50 beside p99,
// which may be a thousand times apart) uses a log scale with a grid line
// per power of ten, so both lines stay readable; the caption says so.

// Chart geometry, in SVG user units.
const (
	chartWidth  = 480
	chartHeight = 170
	chartLeft   = 56 // room for the value labels
	chartRight  = chartWidth - 10
	chartTop    = 8
	chartBottom = chartHeight - 22 // room for the time labels
)

// chart is one chart, ready for the "chart" template.
type chart struct {
	ID, Title                string
	Width, Height            int
	Left, Right, Top, Bottom int
	Log                      bool
	YTicks, XTicks           []tick
	Lines                    []chartLine
}

type tick struct {
	Pos   float64
	Label string
}

type chartLine struct {
	Label  string
	Class  string
	Points string // an SVG polyline's points attribute
	Last   string // the latest value, as text
}

// series is one line: a value per point in time.
type series struct {
	label  string
	class  string
	values []float64
}

func runsChart(h scheduler.RunHistory) chart {
	return newChart("runs", "Runs per second", secondsOf(h), false, perSecond,
		series{"runs", "line-a", valuesOf(h, func(s scheduler.RunSecond) float64 { return float64(s.Runs) })})
}

func failedChart(h scheduler.RunHistory) chart {
	return newChart("failed", "Failed runs per second", secondsOf(h), false, perSecond,
		series{"failed", "line-bad", valuesOf(h, func(s scheduler.RunSecond) float64 { return float64(s.Failed) })})
}

func latenessChart(h scheduler.RunHistory) chart {
	return newChart("lateness", "Start lateness", secondsOf(h), true, durationText,
		series{"p50", "line-a", valuesOf(h, func(s scheduler.RunSecond) float64 { return float64(s.LatenessP50) })},
		series{"p99", "line-b", valuesOf(h, func(s scheduler.RunSecond) float64 { return float64(s.LatenessP99) })})
}

func perSecond(v float64) string { return trimFloat(v) + "/s" }

func durationText(v float64) string { return dur(time.Duration(v)) }

// trimFloat prints v with at most two decimals and no trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

func secondsOf(h scheduler.RunHistory) []time.Time {
	out := make([]time.Time, len(h.Seconds))
	for i, s := range h.Seconds {
		out[i] = s.Start
	}
	return out
}

func valuesOf(h scheduler.RunHistory, f func(scheduler.RunSecond) float64) []float64 {
	out := make([]float64, len(h.Seconds))
	for i, s := range h.Seconds {
		out[i] = f(s)
	}
	return out
}

// newChart draws the series over the times xs (oldest first). mayLog
// allows the log scale (for durations); format prints a value.
func newChart(id, title string, xs []time.Time, mayLog bool, format func(float64) string, ss ...series) chart {
	c := chart{ID: id, Title: title, Width: chartWidth, Height: chartHeight,
		Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom}
	top, low := 0.0, math.Inf(1)
	for _, s := range ss {
		for _, v := range s.values {
			top = max(top, v)
			if v > 0 {
				low = min(low, v)
			}
		}
	}
	var y func(float64) float64
	if mayLog && top > 0 {
		c.Log = true
		lo, hi := math.Floor(math.Log10(low)), math.Ceil(math.Log10(top))
		if hi == lo {
			hi++
		}
		y = func(v float64) float64 {
			if v <= 0 {
				return chartBottom
			}
			f := (math.Log10(v) - lo) / (hi - lo)
			return chartBottom - max(f, 0)*(chartBottom-chartTop)
		}
		for e := lo; e <= hi; e++ {
			c.YTicks = append(c.YTicks, tick{Pos: y(math.Pow(10, e)), Label: format(math.Pow(10, e))})
		}
	} else {
		hi := niceCeil(top)
		if top == 0 && mayLog {
			hi = float64(time.Second) // an empty chart of durations: 0 to 1s
		}
		y = func(v float64) float64 { return chartBottom - v/hi*(chartBottom-chartTop) }
		for _, f := range []float64{0, 0.5, 1} {
			c.YTicks = append(c.YTicks, tick{Pos: y(f * hi), Label: format(f * hi)})
		}
	}
	x := timeAxis(&c, xs)
	for _, s := range ss {
		var b strings.Builder
		for i, v := range s.values {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(v))
		}
		line := chartLine{Label: s.label, Class: s.class, Points: strings.TrimSpace(b.String())}
		if n := len(s.values); n > 0 {
			line.Last = format(s.values[n-1])
		}
		c.Lines = append(c.Lines, line)
	}
	return c
}

// timeAxis sets c's time ticks for xs and returns the x of point i.
func timeAxis(c *chart, xs []time.Time) func(int) float64 {
	if len(xs) < 2 {
		return func(int) float64 { return chartRight }
	}
	first, last := xs[0], xs[len(xs)-1]
	span := last.Sub(first)
	x := func(t time.Time) float64 {
		return chartLeft + float64(t.Sub(first))/float64(span)*(chartRight-chartLeft)
	}
	step := time.Hour * 6
	for _, s := range []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
		30 * time.Minute, time.Hour, 3 * time.Hour} {
		if span/s <= 6 {
			step = s
			break
		}
	}
	for back := time.Duration(0); back <= span; back += step {
		label := "now"
		if back > 0 {
			label = "-" + coarse(back)
		}
		pos := x(last.Add(-back))
		if pos-chartLeft < 20 {
			label = "" // it would print over the value axis's lowest label
		}
		c.XTicks = append(c.XTicks, tick{Pos: pos, Label: label})
	}
	return func(i int) float64 { return x(xs[i]) }
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
