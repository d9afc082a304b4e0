package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
)

// The CSRF defence has two layers, both checked on every POST:
//
//   - Cross-origin protection (net/http's CrossOriginProtection): a browser
//     tells where a request comes from in Sec-Fetch-Site (every browser since
//     2023) or Origin. A POST whose Sec-Fetch-Site is anything but
//     "same-origin" or "none", or, lacking it, whose Origin's host is not the
//     request's Host, is refused, whatever token it carries. A request with
//     neither header is not from a current browser's page (curl, a script, a
//     very old browser): it passes this layer and must pass the next.
//   - A token bound to the visitor (the double-submit cookie, signed): the
//     first page a browser gets sets a random visitor cookie; every form
//     carries HMAC-SHA256(key, visitor) with a key drawn per Handler, so a
//     token is worthless without its own cookie and no one can make one
//     without the key. A token copied from another visitor's page, or a
//     cookie planted without its token, does not pass.

// visitorCookie names the cookie holding the visitor's random ID.
const visitorCookie = "stpe_visitor"

// secretKey is a Handler's random key: it signs the CSRF tokens and the
// flash messages. It never leaves the process.
type secretKey [32]byte

func newSecretKey() (secretKey, error) {
	var k secretKey
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("dashboard: secret key: %w", err)
	}
	return k, nil
}

// sign returns HMAC-SHA256(k, parts joined by NUL bytes).
func (k secretKey) sign(parts ...string) []byte {
	m := hmac.New(sha256.New, k[:])
	for i, p := range parts {
		if i > 0 {
			m.Write([]byte{0})
		}
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// csrfToken is the token the forms of visitor's pages carry.
func (k secretKey) csrfToken(visitor string) string {
	return hex.EncodeToString(k.sign("csrf", visitor))
}

// validVisitor reports whether v looks like a visitor ID this package made:
// 32 hex digits.
func validVisitor(v string) bool {
	if len(v) != 32 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// visitor returns the request's visitor ID, setting a new visitor cookie
// on w if the request has none (or a malformed one).
func visitor(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(visitorCookie); err == nil && validVisitor(c.Value) {
		return c.Value
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	v := hex.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: visitorCookie, Value: v, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return v
}

// checkPost applies both layers to a POST and returns why it is refused,
// or "" if it may go on.
func (h *Handler) checkPost(r *http.Request) string {
	if err := h.origins.Check(r); err != nil {
		return "the request comes from another site (Sec-Fetch-Site or Origin): refused"
	}
	c, err := r.Cookie(visitorCookie)
	if err != nil || !validVisitor(c.Value) {
		return "no visitor cookie: allow cookies for this site and reload the page"
	}
	got, err := hex.DecodeString(r.PostFormValue("csrf"))
	if err != nil || !hmac.Equal(got, h.key.sign("csrf", c.Value)) {
		return "missing or wrong CSRF token for this visitor: reload the page"
	}
	return ""
}
