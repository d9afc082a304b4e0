package main

import (
	"errors"
	"testing"
	"time"
)

func TestParseTimeAndDuration(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"+10m", now.Add(10 * time.Minute)},
		{"-2h", now.Add(-2 * time.Hour)},
		{"+1d", now.Add(24 * time.Hour)},
		{"+1d12h", now.Add(36 * time.Hour)},
		{"+0s", now},
		{"2026-12-01T08:00:00Z", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
		{"2026-12-01T08:00:00.5+01:00", time.Date(2026, 12, 1, 7, 0, 0, 5e8, time.UTC)},
	} {
		got, err := parseTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "now", "10m", "+", "+-5m", "++5m", "+5 m", "+d", "+1x", "2026-12-01", "2026-12-01 08:00:00", "+99999d"} {
		_, err := parseTime(in, now)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseTime(%q): %v, want a usage error", in, err)
		}
	}
	for _, in := range []string{"-1h", "", "7", "d"} {
		if _, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) accepted", in)
		}
	}
	if d, err := parseDuration("7d"); err != nil || d != 7*24*time.Hour {
		t.Errorf("parseDuration(7d) = %v, %v", d, err)
	}
}
