package dashboard

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// payloadShown is how many bytes of a payload a task's page shows unless
// asked for all of it.
const payloadShown = 4 << 10

// payloadView is a task's payload as its page shows it: printable text
// (JSON indented) or, for anything else, a hex dump. The template escapes
// it like every other value; this only decides what is readable.
type payloadView struct {
	Size      int    // the payload's length in bytes
	Text      string // what the page shows
	Hex       bool   // Text is a hex dump
	Truncated bool   // Text covers only the first payloadShown bytes
}

// viewPayload renders b, the first payloadShown bytes of it unless all.
func viewPayload(b []byte, all bool) payloadView {
	v := payloadView{Size: len(b)}
	if !printable(b) {
		if !all && len(b) > payloadShown {
			b, v.Truncated = b[:payloadShown], true
		}
		v.Text, v.Hex = hex.Dump(b), true
		return v
	}
	var indented bytes.Buffer
	if json.Valid(b) && json.Indent(&indented, b, "", "  ") == nil {
		b = indented.Bytes()
	}
	if !all && len(b) > payloadShown {
		cut := payloadShown
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut-- // never split a character
		}
		b, v.Truncated = b[:cut], true
	}
	v.Text = string(b)
	return v
}

// printable reports whether b is UTF-8 text of printable characters, tabs
// and line breaks.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
	}
	return true
}
