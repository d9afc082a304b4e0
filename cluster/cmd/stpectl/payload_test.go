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
	if s := viewPayload([]byte("line one\nline two"), -1).short(6); s != "line o..." {
		t.Fatalf("short: %s", s)
	}
	if s := viewPayload([]byte{0, 1, 2}, -1).short(6); s != "(3 bytes, binary)" {
		t.Fatalf("short of binary: %s", s)
	}
}

func TestPayloadsShowAsTheBytesTheyAre(t *testing.T) {
	obj := []byte(`{"to":"ada","n":[1,2]}`)
	v := viewPayload(obj, -1)
	if !v.isJSON || v.note() != "JSON, indented" || v.block() != "{\n  \"to\": \"ada\",\n  \"n\": [\n    1,\n    2\n  ]\n}" {
		t.Fatalf("JSON: %v %q %q", v.isJSON, v.note(), v.block())
	}
	if s := viewPayload([]byte("{\n \"to\": \"ada\"\n}"), -1).short(40); s != `{"to":"ada"}` {
		t.Fatalf("JSON in a listing: %s", s)
	}
	if d := viewPayload(obj, -1).json(); d.Encoding != "json" || string(d.Value) != string(obj) || d.Data != string(obj) {
		t.Fatalf("JSON document: %+v", d)
	}
	if d := viewPayload(obj, 5).json(); d.Encoding != "json" || d.Value != nil || !d.Truncated || d.Data != `{"to"` {
		t.Fatalf("cut JSON document: %+v", d)
	}
	for _, text := range []string{"42", "true", "hello", "{not json"} {
		if v := viewPayload([]byte(text), -1); v.isJSON || !v.text || v.note() != "text" || v.block() != text || v.short(40) != text {
			t.Errorf("%q: %+v %q", text, v, v.short(40))
		}
	}
	if v := viewPayload([]byte{0xff, 0}, -1); v.note() != "binary (not printable UTF-8), hex dump" || v.json().Encoding != "base64" {
		t.Fatalf("binary: %q %+v", v.note(), v.json())
	}
	if s := viewPayload(nil, -1).short(40); s != "-" {
		t.Fatalf("an empty payload in a listing: %q", s)
	}
}
