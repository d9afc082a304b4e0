package dashboard

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// A flash is the message an action leaves for the page the browser goes
// back to ("task 42 retried"). The page shows only text the server wrote:
// the redirect's flash= query holds the text, its level, an expiry and an
// HMAC over them and the visitor's ID, under the Handler's key. Text from
// the URL that the server did not sign (a msg= a phisher put in a link),
// a flash signed for another visitor or one older than flashTTL is ignored.
// Rails' and Django's flash messages play the same part (they keep them in
// the session; the dashboard has none).

// flashTTL is how long after the action its flash still shows.
const flashTTL = 10 * time.Minute

// Flash levels: the page styles an error apart from a success.
const (
	flashOK    = "ok"
	flashError = "error"
)

// flash is a verified message for the page.
type flash struct {
	Level string // flashOK or flashError
	Text  string
}

// sealFlash returns the flash= value of text at level for visitor.
func (h *Handler) sealFlash(visitor, level, text string, now time.Time) string {
	exp := strconv.FormatInt(now.Add(flashTTL).Unix(), 10)
	body := base64.RawURLEncoding.EncodeToString([]byte(text))
	mac := hex.EncodeToString(h.key.sign("flash", visitor, level, exp, body))
	return level + "." + exp + "." + body + "." + mac
}

// openFlash verifies a flash= value for visitor and returns its message,
// or false if it is absent, forged, another visitor's or expired.
func (h *Handler) openFlash(visitor, v string, now time.Time) (flash, bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 4 || (parts[0] != flashOK && parts[0] != flashError) {
		return flash{}, false
	}
	level, exp, body, mac := parts[0], parts[1], parts[2], parts[3]
	got, err := hex.DecodeString(mac)
	if err != nil || !hmac.Equal(got, h.key.sign("flash", visitor, level, exp, body)) {
		return flash{}, false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || now.Unix() > unix {
		return flash{}, false
	}
	text, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return flash{}, false
	}
	return flash{Level: level, Text: string(text)}, true
}

// withFlash returns location with a flash of text at level for visitor
// added to its query.
func (h *Handler) withFlash(location, visitor, level, text string) string {
	sep := "?"
	if strings.Contains(location, "?") {
		sep = "&"
	}
	return location + sep + "flash=" + url.QueryEscape(h.sealFlash(visitor, level, text, time.Now()))
}
