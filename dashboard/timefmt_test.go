package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
)

func TestRelativeTimesReadAsPeopleSayThem(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		250 * time.Millisecond:                        "now",
		45 * time.Second:                              "in 45s",
		4*time.Minute + 10*time.Second:                "in 4m10s",
		-3 * time.Minute:                              "3m ago",
		-(59*time.Minute + 26773936*time.Microsecond): "59m27s ago",
		3*time.Hour + 12*time.Minute + 5*time.Second:  "in 3h12m",
		-(50 * time.Hour):                             "2d2h ago",
		48 * time.Hour:                                "in 2d",
	} {
		if got := relative(now.Add(d), now); got != want {
			t.Errorf("relative(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDurationsAreRoundedToTheirSize(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234 * time.Nanosecond:                     "1µs",
		12345678 * time.Nanosecond:                 "12.3ms",
		4567891234 * time.Nanosecond:               "4.57s",
		59*time.Minute + 26773936*time.Microsecond: "59m27s",
	} {
		if got := dur(d); got != want {
			t.Errorf("dur(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestATimeShowsItsDateZoneAndDistance(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	p := &page{Zone: paris, Now: now}
	got := string(at(p, now.Add(-3*time.Minute)))
	want := `<time datetime="2026-11-28T08:57:00Z">2026-11-28 09:57:00 CET</time> <span class="rel">3m ago</span>`
	if got != want {
		t.Errorf("at = %s\nwant %s", got, want)
	}
	if at(p, time.Time{}) != "" {
		t.Error("the zero time is not blank")
	}
}

func TestChartsHaveAxesAndALogScaleWhenP99DwarfsP50(t *testing.T) {
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var h scheduler.RunHistory
	for i := range 300 {
		h.Seconds = append(h.Seconds, scheduler.RunSecond{Start: start.Add(time.Duration(i) * time.Second), Runs: i % 7,
			LatenessP50: 50 * time.Microsecond, LatenessP99: 40 * time.Millisecond})
	}
	late := latenessChart(h)
	if !late.Log {
		t.Fatal("p50 50µs beside p99 40ms: want a log scale")
	}
	var ys []string
	for _, tk := range late.YTicks {
		ys = append(ys, tk.Label)
	}
	if got := strings.Join(ys, " "); got != "10µs 100µs 1ms 10ms 100ms" {
		t.Errorf("log ticks %q", got)
	}
	var xs []string
	for _, tk := range late.XTicks {
		xs = append(xs, tk.Label)
	}
	if got := strings.Join(xs, " "); got != "now -1m -2m -3m -4m" {
		t.Errorf("time ticks %q", got)
	}
	// p50 and p99 stay apart on the log scale: p50 is not squashed onto the
	// axis as on a linear one (40 ms tall: 50 µs is 0.1 % of it).
	var x, p50y, p99y float64
	if _, err := fmt.Sscanf(strings.Fields(late.Lines[0].Points)[0], "%f,%f", &x, &p50y); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(strings.Fields(late.Lines[1].Points)[0], "%f,%f", &x, &p99y); err != nil {
		t.Fatal(err)
	}
	if chartBottom-p50y < 20 || p50y-p99y < 20 {
		t.Errorf("p50 at y %.1f, p99 at %.1f, axis at %d: want both well clear of the axis and of each other", p50y, p99y, chartBottom)
	}
	runs := runsChart(h)
	if runs.Log {
		t.Error("a count chart uses a log scale")
	}
	if got := runs.YTicks[len(runs.YTicks)-1].Label; got != "10/s" {
		t.Errorf("runs chart top %q, want 10/s (6 rounded up)", got)
	}
}
