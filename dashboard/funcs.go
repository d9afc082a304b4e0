package dashboard

import (
	"html/template"
	"strings"
)

// templateFuncs are the helpers the templates use.
var templateFuncs = template.FuncMap{
	"at":  at,
	"dur": dur,
	// firstLine is an error's first line, for a table cell.
	"firstLine": func(s string) string {
		first, _, _ := strings.Cut(s, "\n")
		return first
	},
	"add":     func(a, b int) int { return a + b },
	"pair":    func(a, b any) []any { return []any{a, b} },
	"nextRun": nextRun,
}
