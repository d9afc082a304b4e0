package dashboard

import (
	"html/template"
	"strings"
	"time"
)

// templateFuncs are the helpers the templates use.
var templateFuncs = template.FuncMap{
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format("15:04:05.000")
	},
	"dur": func(d time.Duration) string { return d.Round(time.Microsecond).String() },
	// when prints a stored time in UTC with the date, as cluster times
	// come from every node's clock.
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
	},
	// firstLine is an error's first line, for a table cell.
	"firstLine": func(s string) string {
		first, _, _ := strings.Cut(s, "\n")
		return first
	},
}
