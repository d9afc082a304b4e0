package main

import (
	"strings"
	"testing"
)

// Usage: help, -h, and the usage errors that need no Redis (exit status 2,
// nothing dialed: the address given is one where nothing listens).

func TestHelpListsEveryCommandAndExitsZero(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}} {
		r := runCtl(t, nil, args...)
		wantOK(t, r)
		for _, c := range commands() {
			if !strings.Contains(r.stdout, "\n  "+c.name) {
				t.Errorf("stpectl %v: no line for %s in\n%s", args, c.name, r.stdout)
			}
		}
		for _, flag := range []string{"-redis", "-prefix", "-json", "-timeout", "Exit status"} {
			if !strings.Contains(r.stdout, flag) {
				t.Errorf("stpectl %v: %q missing from\n%s", args, flag, r.stdout)
			}
		}
	}
}

func TestCommandHelpShowsItsFlags(t *testing.T) {
	for _, args := range [][]string{{"list", "-h"}, {"help", "list"}, {"-json", "list", "-help"}} {
		r := runCtl(t, nil, args...)
		wantOK(t, r)
		for _, want := range []string{"Usage: stpectl list", "-state", "-limit", "-cursor", "Global flags"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stpectl %v: %q missing from\n%s", args, want, r.stdout)
			}
		}
	}
	for _, c := range commands() {
		wantOK(t, runCtl(t, nil, c.name, "-h"))
	}
}

func TestUsageErrorsExitTwoWithAUsageMessage(t *testing.T) {
	const nowhere = "127.0.0.1:1"
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{nil, []string{"no command", "Usage:"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "Usage:"}},
		{[]string{"-bogus", "counts"}, []string{"flag provided but not defined: -bogus", "Usage:"}},
		{[]string{"list", "-bogus"}, []string{"stpectl: list: flag provided but not defined: -bogus", "Usage: stpectl list"}},
		{[]string{"list", "-state", "asleep"}, []string{`-state "asleep": want pending, running, dead or done`, "Usage: stpectl list"}},
		{[]string{"list", "-limit", "0"}, []string{"-limit 0: want 1 to 1000"}},
		{[]string{"list", "-limit", "1001"}, []string{"-limit 1001: want 1 to 1000"}},
		{[]string{"show"}, []string{"show: want 1 argument(s) (ID), got 0", "Usage: stpectl show"}},
		{[]string{"show", "a", "b"}, []string{"got 2"}},
		{[]string{"reschedule", "a"}, []string{"want 2 argument(s) (ID TIME)"}},
		{[]string{"reschedule", "a", "tomorrow"}, []string{`malformed time "tomorrow"`, "Usage: stpectl reschedule"}},
		{[]string{"reschedule", "a", "+10 minutes"}, []string{`malformed time "+10 minutes"`}},
		{[]string{"purge"}, []string{"exactly one of -before and -older"}},
		{[]string{"purge", "-before", "+1h", "-older", "1h"}, []string{"exactly one of -before and -older"}},
		{[]string{"purge", "-older", "a week"}, []string{`malformed duration "a week"`}},
		{[]string{"purge", "-state", "pending", "-older", "1h"}, []string{`-state "pending": want dead or done`}},
		{[]string{"-timeout", "0s", "counts"}, []string{"-timeout 0s: want more than 0"}},
		{[]string{"-timeout", "soon", "counts"}, []string{"invalid value"}},
		{[]string{"help", "frobnicate"}, []string{`unknown command "frobnicate"`}},
	} {
		r := runCtl(t, nil, append([]string{"-redis", nowhere}, tc.args...)...)
		wantExit(t, r, 2, tc.wants...)
		if r.stdout != "" {
			t.Errorf("stpectl %v: stdout %q, want nothing without -json", tc.args, r.stdout)
		}
	}
}

func TestBadRedisURLIsAUsageError(t *testing.T) {
	r := runCtl(t, nil, "-redis", "redis://127.0.0.1:6379/notadb", "counts")
	wantExit(t, r, 2, `stpectl: -redis redis://127.0.0.1:6379/notadb: redis: invalid database number: "notadb"`)
	r = runCtl(t, []string{"STPE_REDIS_URL=redis://127.0.0.1:6379/notadb"}, "counts")
	wantExit(t, r, 2, "-redis")
}

func TestUsageErrorWithJSONWritesTheErrorDocument(t *testing.T) {
	r := runCtl(t, nil, "-json", "reschedule", "a", "yesterday")
	wantExit(t, r, 2, "malformed time")
	var doc errorJSON
	decodeOne(t, r.stdout, &doc)
	if doc.Reason != "usage" || !strings.Contains(doc.Error, `malformed time "yesterday"`) {
		t.Fatalf("error document %+v", doc)
	}
}

func TestEveryUsageLineNamesEveryArgument(t *testing.T) {
	for _, c := range commands() {
		r := runCtl(t, nil, "help", c.name)
		wantOK(t, r)
		line, _, _ := strings.Cut(r.stdout, "\n")
		for _, arg := range c.args {
			if !strings.Contains(line, " "+arg) {
				t.Errorf("stpectl help %s: %q does not name %s", c.name, line, arg)
			}
		}
	}
	for _, want := range []string{"Usage: stpectl pause KIND\n", "Usage: stpectl resume KIND\n", "Usage: stpectl show [-full] ID\n",
		"Usage: stpectl reschedule ID TIME\n", "Usage: stpectl retry ID\n"} {
		name := strings.Fields(want)[2]
		if r := runCtl(t, nil, "help", name); !strings.HasPrefix(r.stdout, want) {
			t.Errorf("stpectl help %s: %q, want %q", name, r.stdout, want)
		}
	}
}
