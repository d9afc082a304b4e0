package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Who may see the pages: nobody is asked (the default, for a dashboard on
// the loopback address), a user name and password (HTTP basic auth), or a
// reverse proxy that authenticates and names the user in a header it sets.

// basicAuthEnv is the environment variable that may hold -basic-auth's
// user:password, so that the password is not on the command line.
const basicAuthEnv = "STPE_DASHBOARD_BASIC_AUTH"

// credentials are the user name and password basic auth accepts, kept as
// SHA-256 sums so that the comparison takes the same time whatever their
// lengths.
type credentials struct {
	user, password [sha256.Size]byte
}

// parseCredentials reads "user:password"; what is wrong with it is said
// without echoing it.
func parseCredentials(s, from string) (credentials, error) {
	user, password, ok := strings.Cut(strings.TrimRight(s, "\r\n"), ":")
	if !ok || user == "" || password == "" {
		return credentials{}, fmt.Errorf("%s: want user:password, both non-empty", from)
	}
	return credentials{user: sha256.Sum256([]byte(user)), password: sha256.Sum256([]byte(password))}, nil
}

// loadCredentials picks the basic auth credentials from -basic-auth, then
// -basic-auth-file, then the environment; ok is false if none is given.
func loadCredentials(flagValue, file string, getenv func(string) string) (c credentials, ok bool, err error) {
	switch {
	case flagValue != "" && file != "":
		return c, false, errors.New("-basic-auth and -basic-auth-file: give one")
	case flagValue != "":
		c, err = parseCredentials(flagValue, "-basic-auth")
		return c, err == nil, err
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return c, false, fmt.Errorf("-basic-auth-file: %w", err)
		}
		c, err = parseCredentials(string(b), "-basic-auth-file "+file)
		return c, err == nil, err
	case getenv(basicAuthEnv) != "":
		c, err = parseCredentials(getenv(basicAuthEnv), basicAuthEnv)
		return c, err == nil, err
	}
	return c, false, nil
}

// matches tells whether user and password are the credentials, comparing
// in constant time.
func (c credentials) matches(user, password string) bool {
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(password))
	// Both comparisons always run: no early exit tells which one failed.
	okUser := subtle.ConstantTimeCompare(u[:], c.user[:])
	okPassword := subtle.ConstantTimeCompare(p[:], c.password[:])
	return okUser&okPassword == 1
}

// requireBasicAuth serves next only to requests with the credentials.
func requireBasicAuth(c credentials, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		if !ok || !c.matches(user, password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="stpe-dashboard", charset="UTF-8"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireHeader serves next only to requests that carry header, set by
// an authenticating reverse proxy (oauth2-proxy, a web server's auth
// module) to the user's name. It is only as safe as the rule that nothing
// but the proxy can reach the dashboard.
func requireHeader(header string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSpace(r.Header.Get(header)) == "" {
			http.Error(w, "forbidden: no "+header+" from the proxy", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
