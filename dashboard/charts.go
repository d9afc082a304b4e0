package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 600
	chartHeight = 120
)

// chart is one SVG line chart drawn on the server: up to two series over
// the seconds of a RunHistory, scaled to the larger's maximum.
type chart struct {
	Title  string
	Max    string // the top of the y axis, as text
	Lines  []chartLine
	Width  int
	Height int
}

type chartLine struct {
	Label  string
	Class  string
	Points string // an SVG polyline's points attribute
}

func runsChart(h scheduler.RunHistory) chart {
	return newChart("Runs per second", h, func(n float64) string { return fmt.Sprintf("%.0f/s", n) },
		series{"runs", "line-a", func(s scheduler.RunSecond) float64 { return float64(s.Runs) }})
}

func failedChart(h scheduler.RunHistory) chart {
	return newChart("Failed runs per second", h, func(n float64) string { return fmt.Sprintf("%.0f/s", n) },
		series{"failed", "line-bad", func(s scheduler.RunSecond) float64 { return float64(s.Failed) }})
}

func latenessChart(h scheduler.RunHistory) chart {
	return newChart("Start lateness", h, func(n float64) string { return time.Duration(n).String() },
		series{"p99", "line-b", func(s scheduler.RunSecond) float64 { return float64(s.LatenessP99) }},
		series{"p50", "line-a", func(s scheduler.RunSecond) float64 { return float64(s.LatenessP50) }})
}

type series struct {
	label string
	class string
	value func(scheduler.RunSecond) float64
}

func newChart(title string, h scheduler.RunHistory, format func(float64) string, ss ...series) chart {
	top := 0.0
	for _, s := range ss {
		for _, sec := range h.Seconds {
			top = max(top, s.value(sec))
		}
	}
	c := chart{Title: title, Max: format(top), Width: chartWidth, Height: chartHeight}
	scale := 1.0
	if top > 0 {
		scale = (chartHeight - 4) / top
	}
	step := float64(chartWidth)
	if n := len(h.Seconds); n > 1 {
		step = float64(chartWidth) / float64(n-1)
	}
	for _, s := range ss {
		var b strings.Builder
		for i, sec := range h.Seconds {
			fmt.Fprintf(&b, "%.1f,%.1f ", float64(i)*step, chartHeight-2-s.value(sec)*scale)
		}
		c.Lines = append(c.Lines, chartLine{Label: s.label, Class: s.class, Points: strings.TrimSpace(b.String())})
	}
	return c
}
