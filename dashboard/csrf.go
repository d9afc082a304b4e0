package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/url"
)

// csrfToken is the secret every action form carries in a hidden field.
// A page from another site can make the browser post to the dashboard but
// cannot read the dashboard's pages, so it cannot know the token (the
// synchronizer-token pattern). One random token per Handler is enough: the
// dashboard has no sessions of its own.
type csrfToken [32]byte

func newCSRFToken() (csrfToken, error) {
	var t csrfToken
	if _, err := rand.Read(t[:]); err != nil {
		return t, fmt.Errorf("dashboard: csrf token: %w", err)
	}
	return t, nil
}

func (t csrfToken) String() string { return hex.EncodeToString(t[:]) }

// matches compares in constant time, so the token cannot be guessed from
// response times.
func (t csrfToken) matches(got string) bool {
	want := t.String()
	return len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
