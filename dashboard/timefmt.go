package dashboard

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// Times and durations as people read them: every time absolute, with its
// date and zone, and relative to the page's moment ("in 4m10s", "3m ago");
// durations rounded to what matters at their size, never "59m26.773936s".

// absoluteLayout is an absolute time's format; the zone's name follows.
const absoluteLayout = "2006-01-02 15:04:05"

// at renders t for page p: the absolute time in p's zone in a <time>
// element (its datetime attribute in UTC, for the live script) and the
// relative one beside it. The zero time renders as "".
func at(p *page, t time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	return template.HTML(fmt.Sprintf(`<time datetime="%s">%s</time> <span class="rel">%s</span>`,
		t.UTC().Format(time.RFC3339Nano), template.HTMLEscapeString(absolute(t, p.Zone)), template.HTMLEscapeString(relative(t, p.Now))))
}

// absolute is t in zone with its date and the zone's abbreviation.
func absolute(t time.Time, zone *time.Location) string {
	return t.In(zone).Format(absoluteLayout + " MST")
}

// relative is t seen from now: "in 4m10s", "3m ago", "now".
func relative(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + coarse(d)
	}
	return coarse(-d) + " ago"
}

// coarse is a duration of at least a second to two units: "45s",
// "4m10s", "3h12m", "2d4h".
func coarse(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return trimZero(fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second)), "m00s", "m")
	case d < 24*time.Hour:
		return trimZero(fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute)), "h00m", "h")
	}
	return trimZero(fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)), "d0h", "d")
}

func trimZero(s, zero, unit string) string {
	if strings.HasSuffix(s, zero) {
		return strings.TrimSuffix(s, zero) + unit
	}
	return s
}

// dur is a duration rounded to its size: whole microseconds below a
// millisecond, a tenth of a millisecond below a second, hundredths of a
// second below a minute, whole seconds above.
func dur(d time.Duration) string {
	a := d.Abs()
	switch {
	case a < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case a < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case a < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
