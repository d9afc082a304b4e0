package main

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Showing a payload safely: as text when it is UTF-8 made of printable
// characters (and newlines and tabs), otherwise as bytes (a hex dump in
// text output, base64 in JSON), so that a payload never writes control
// sequences to the operator's terminal. Long payloads are cut at
// payloadLimit bytes unless -full is given.

// payloadLimit is how many bytes of a payload show and list -json show
// without -full.
const payloadLimit = 1024

// payloadView is a payload as shown.
type payloadView struct {
	text      bool   // shown as text (else as bytes)
	size      int    // the whole payload's length in bytes
	shown     []byte // the part shown: all of it, or its first bytes
	truncated bool   // shown is only the start
}

// viewPayload decides how to show p, cut at limit bytes (all if limit < 0).
func viewPayload(p []byte, limit int) payloadView {
	v := payloadView{text: isText(p), size: len(p), shown: p}
	if limit >= 0 && len(p) > limit {
		cut := limit
		if v.text {
			for cut > 0 && !utf8.RuneStart(p[cut]) {
				cut-- // never split a character
			}
		}
		v.shown, v.truncated = p[:cut], true
	}
	return v
}

// isText reports whether p is UTF-8 made only of printable characters,
// newlines and tabs.
func isText(p []byte) bool {
	if !utf8.Valid(p) {
		return false
	}
	for _, r := range string(p) {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}

// payloadJSON is the JSON shape of a payload.
type payloadJSON struct {
	// Encoding is "text" (Data is the payload's text) or "base64" (Data
	// is the payload's bytes in standard base64).
	Encoding string `json:"encoding"`
	// Size is the whole payload's length in bytes.
	Size int `json:"size"`
	// Data is the payload, or its start when Truncated.
	Data string `json:"data"`
	// Truncated is true when Data holds only the payload's first bytes
	// (run with -full for all of them).
	Truncated bool `json:"truncated"`
}

func (v payloadView) json() payloadJSON {
	if v.text {
		return payloadJSON{Encoding: "text", Size: v.size, Data: string(v.shown), Truncated: v.truncated}
	}
	return payloadJSON{Encoding: "base64", Size: v.size, Data: base64.StdEncoding.EncodeToString(v.shown), Truncated: v.truncated}
}

// block is the payload for show's text output: the text, or a hex dump.
func (v payloadView) block() string {
	if v.text {
		return string(v.shown)
	}
	return hex.Dump(v.shown)
}

// short is the payload in one cell of a listing: at most max bytes, quoted
// (so newlines and the like are escaped), or its size when it is binary.
func (v payloadView) short(max int) string {
	if !v.text {
		return "(" + strconv.Itoa(v.size) + " bytes, binary)"
	}
	s := v.shown
	cut := len(s) > max
	if cut {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	q := strconv.Quote(string(s))
	if cut || v.truncated {
		q += "..."
	}
	return q
}
