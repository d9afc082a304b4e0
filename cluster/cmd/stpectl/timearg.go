package main

import (
	"strconv"
	"strings"
	"time"
)

// Times and durations on the command line: an RFC 3339 time, or a duration
// from now ("+10m", "-1h"); durations may count days ("7d", "1d12h").

// parseTime reads an RFC 3339 time or a signed duration from now.
func parseTime(s string, now time.Time) (time.Time, error) {
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		d, err := parseDuration(s[1:])
		if err != nil {
			return time.Time{}, usagef("malformed time %q: %v", s, err)
		}
		if s[0] == '-' {
			d = -d
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("malformed time %q: want RFC 3339 (2026-11-25T10:00:00Z) or a duration from now (+10m, -2h, +1d)", s)
	}
	return t, nil
}

// parseDuration reads a non-negative Go duration ("90s", "1h30m") with an
// optional leading count of days ("7d", "1d12h").
func parseDuration(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, usagef("malformed duration %q: want 90s, 10m, 2h, 7d or 1d12h", s)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || strings.HasPrefix(s, "+") {
		return 0, usagef("malformed duration %q: want 90s, 10m, 2h, 7d or 1d12h", s)
	}
	return days + d, nil
}

// formatTime shows t in the local zone to the second, with how far it is
// from now.
func formatTime(t, now time.Time) string {
	d := t.Sub(now).Round(time.Second)
	rel := "now"
	switch {
	case d > 0:
		rel = "in " + d.String()
	case d < 0:
		rel = (-d).String() + " ago"
	}
	return t.Local().Format(time.RFC3339) + " (" + rel + ")"
}
