package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Showing a payload as the bytes it is: JSON as JSON (indented in show),
// UTF-8 made of printable characters (and newlines and tabs) as text, and
// anything else as bytes (a hex dump in text output, base64 in JSON, with
// a note saying so), so that a payload never writes control sequences to
// the operator's terminal. Long payloads are cut at payloadLimit bytes
// unless -full is given.

// payloadLimit is how many bytes of a payload show and list -json show
// without -full.
const payloadLimit = 1024

// payloadView is a payload as shown.
type payloadView struct {
	text      bool   // printable text (JSON included); else bytes
	isJSON    bool   // a JSON object, array or string
	size      int    // the whole payload's length in bytes
	whole     []byte // the whole payload
	shown     []byte // the part shown: all of it, or its first bytes
	truncated bool   // shown is only the start
}

// viewPayload decides how to show p, cut at limit bytes (all if limit < 0).
func viewPayload(p []byte, limit int) payloadView {
	v := payloadView{text: isText(p), size: len(p), whole: p, shown: p}
	v.isJSON = v.text && isJSON(p)
	if limit >= 0 && len(p) > limit {
		v.shown, v.truncated = cutText(p, limit, v.text), true
	}
	return v
}

// cutText is p's first limit bytes, never splitting a character of text.
func cutText(p []byte, limit int, text bool) []byte {
	cut := limit
	if text {
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
	}
	return p[:cut]
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

// isJSON reports whether p is a JSON object, array or string (a bare
// number or word reads better as text).
func isJSON(p []byte) bool {
	t := bytes.TrimSpace(p)
	return len(t) > 0 && strings.IndexByte(`{["`, t[0]) >= 0 && json.Valid(t)
}

// payloadJSON is the JSON shape of a payload.
type payloadJSON struct {
	// Encoding is "json" (Data is the payload's text, and Value the
	// payload itself unless Truncated), "text" (Data is the payload's
	// text) or "base64" (Data is the payload's bytes in standard base64:
	// it is not printable UTF-8).
	Encoding string `json:"encoding"`
	// Size is the whole payload's length in bytes.
	Size int `json:"size"`
	// Data is the payload, or its start when Truncated.
	Data string `json:"data"`
	// Value is a JSON payload as a JSON value, when whole.
	Value json.RawMessage `json:"value,omitempty"`
	// Truncated is true when Data holds only the payload's first bytes
	// (run with -full for all of them).
	Truncated bool `json:"truncated"`
}

func (v payloadView) json() payloadJSON {
	switch {
	case v.isJSON:
		doc := payloadJSON{Encoding: "json", Size: v.size, Data: string(v.shown), Truncated: v.truncated}
		if !v.truncated {
			doc.Value = json.RawMessage(bytes.TrimSpace(v.whole))
		}
		return doc
	case v.text:
		return payloadJSON{Encoding: "text", Size: v.size, Data: string(v.shown), Truncated: v.truncated}
	}
	return payloadJSON{Encoding: "base64", Size: v.size, Data: base64.StdEncoding.EncodeToString(v.shown), Truncated: v.truncated}
}

// note says how show presents the payload: "JSON, indented", "text" or
// "binary, hex dump", and whether it is cut.
func (v payloadView) note() string {
	how := "text"
	switch {
	case v.isJSON:
		how = "JSON, indented"
	case !v.text:
		how = "binary (not printable UTF-8), hex dump"
	}
	if v.truncated {
		how += ", first " + strconv.Itoa(len(v.shown)) + " bytes; -full for all"
	}
	return how
}

// block is the payload for show's text output: JSON indented (the whole
// payload indented, then cut like the rest), text as it is, or a hex
// dump.
func (v payloadView) block() string {
	switch {
	case v.isJSON:
		var out bytes.Buffer
		if json.Indent(&out, bytes.TrimSpace(v.whole), "", "  ") == nil {
			b := out.Bytes()
			if v.truncated && len(b) > len(v.shown) {
				b = cutText(b, len(v.shown), true)
			}
			return string(b)
		}
		return string(v.shown)
	case v.text:
		return string(v.shown)
	}
	return hex.Dump(v.shown)
}

// short is the payload in one cell of a listing, at most max bytes: JSON
// compacted, text's first line, or its size when it is binary.
func (v payloadView) short(max int) string {
	switch {
	case v.size == 0:
		return "-"
	case !v.text:
		return "(" + strconv.Itoa(v.size) + " bytes, binary)"
	}
	s := string(v.shown)
	if v.isJSON {
		var out bytes.Buffer
		if json.Compact(&out, v.whole) == nil {
			s = out.String()
		}
	}
	line, _, more := strings.Cut(s, "\n")
	line = strings.TrimRight(line, "\r")
	if len(line) > max {
		line, more = string(cutText([]byte(line), max, true)), true
	}
	if more || v.truncated && !v.isJSON {
		line += "..."
	}
	return strings.ReplaceAll(line, "\t", " ")
}
