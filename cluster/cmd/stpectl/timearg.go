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
	return parseTimeArg(s, now, false)
}

// parseFutureTime is parseTime where a duration without a sign means from
// now on ("10m" is "+10m"): the time a task is moved to.
func parseFutureTime(s string, now time.Time) (time.Time, error) {
	return parseTimeArg(s, now, true)
}

// parseTimeArg reads an RFC 3339 time or a signed duration from now, and,
// if unsigned, a duration without a sign as one from now on.
func parseTimeArg(s string, now time.Time, unsigned bool) (time.Time, error) {
	if unsigned && s != "" && s[0] >= '0' && s[0] <= '9' {
		if d, err := parseDuration(s); err == nil {
			return now.Add(d), nil
		}
	}
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
// from now ("in 4m10s", "3h5m ago").
func formatTime(t, now time.Time) string {
	return t.Local().Format(time.RFC3339) + " (" + relative(t, now) + ")"
}

// relative is how far t is from now, rounded to what an operator reads:
// "now", "in 42s", "4m10s ago", "in 3h5m", "2d4h ago".
func relative(t, now time.Time) string {
	d := t.Sub(now)
	switch span := humanDuration(d.Abs()); {
	case span == "0s":
		return "now"
	case d > 0:
		return "in " + span
	default:
		return span + " ago"
	}
}

// humanDuration is d rounded to two units at most: seconds under an
// hour ("4m10s"), minutes under a day ("3h5m"), hours beyond ("2d4h").
func humanDuration(d time.Duration) string {
	const day = 24 * time.Hour
	// trim drops a Duration's zero tails: "3m0s" is "3m", "2h0m0s" "2h".
	trim := func(s string) string {
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	switch {
	case d < time.Hour:
		return trim(d.Round(time.Second).String())
	case d < day:
		return trim(d.Round(time.Minute).String())
	default:
		d = d.Round(time.Hour)
		days, hours := d/day, (d%day)/time.Hour
		if hours == 0 {
			return strconv.Itoa(int(days)) + "d"
		}
		return strconv.Itoa(int(days)) + "d" + strconv.Itoa(int(hours)) + "h"
	}
}
