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

func TestRescheduleTimeTakesAnUnsignedDurationAsFromNow(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"10m", now.Add(10 * time.Minute)},
		{"1d2h", now.Add(26 * time.Hour)},
		{"+10m", now.Add(10 * time.Minute)},
		{"-1h", now.Add(-time.Hour)},
		{"2026-12-01T08:00:00Z", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
	} {
		got, err := parseFutureTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseFutureTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"tomorrow", "10", "10 m", "2026-12-01"} {
		if _, err := parseFutureTime(in, now); err == nil {
			t.Errorf("parseFutureTime(%q) accepted", in)
		}
	}
}

func TestRelativeTimesAreRoundedToWhatAnOperatorReads(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{400 * time.Millisecond, "now"},
		{4*time.Minute + 10*time.Second + 123456*time.Microsecond, "in 4m10s"},
		{-(3*time.Minute + 2*time.Millisecond), "3m ago"},
		{42 * time.Second, "in 42s"},
		{3*time.Hour + 5*time.Minute + 29*time.Second, "in 3h5m"},
		{-(2 * time.Hour), "2h ago"},
		{-(52*time.Hour + 10*time.Minute), "2d4h ago"},
		{72 * time.Hour, "in 3d"},
	} {
		if got := relative(now.Add(tc.d), now); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
