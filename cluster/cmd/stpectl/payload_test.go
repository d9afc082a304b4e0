package main

import (
	"strings"
	"testing"
)

func TestViewPayloadKeepsTextWholeCharactersAndTreatsControlsAsBinary(t *testing.T) {
	for _, tc := range []struct {
		in   string
		text bool
	}{
		{"", true},
		{"hello\tworld\r\n", true},
		{"héllo 世界", true},
		{"\x1b[31mred", false},
		{"a\x00b", false},
		{"\xff\xfe", false},
		{"\u202e", false}, // right-to-left override: a format character, not printable
	} {
		if got := viewPayload([]byte(tc.in), -1).text; got != tc.text {
			t.Errorf("viewPayload(%q).text = %v", tc.in, got)
		}
	}
	v := viewPayload([]byte(strings.Repeat("é", 10)), 5) // 'é' is 2 bytes: cut at 4, not inside one
	if string(v.shown) != "éé" || !v.truncated || v.size != 20 {
		t.Fatalf("cut: %q truncated %v size %d", v.shown, v.truncated, v.size)
	}
	if s := viewPayload([]byte("line one\nline two"), -1).short(6); s != `"line o"...` {
		t.Fatalf("short: %s", s)
	}
	if s := viewPayload([]byte{0, 1, 2}, -1).short(6); s != "(3 bytes, binary)" {
		t.Fatalf("short of binary: %s", s)
	}
}
