package redisconn

import (
	"io"
	"regexp"
)

// Redaction: a URL's credentials ride in its user information
// (redis://user:password@host, postgres://user:password@host) and in its
// query: the password= and sentinel_password= parameters go-redis's
// ParseFailoverURL reads, and the user=, password= and sslpassword=
// parameters of a PostgreSQL URL. A PostgreSQL connection string of
// keywords (host=db user=ops password=secret), as libpq and pgx print it,
// holds them as user=, password= and sslpassword= keywords. Redact
// replaces each with "***", wherever in a text it stands.

// redacted is what stands in for removed credentials.
const redacted = "***"

// userinfo matches a URL's scheme and its user information, up to the
// last "@" before the host: the authority ends at "/", "?", "#", white
// space or a quote, and a password may hold "@", so the match is greedy.
// Any scheme matches, so that a mistyped one (redis:/, rdis://) is
// redacted too.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s"'<>` + "`" + `]*@`)

// passwordParam matches a password or user parameter of a URL's query.
var passwordParam = regexp.MustCompile(`(?i)([?&](?:(?:sentinel_|ssl)?password|user)=)[^&#\s"'<>` + "`" + `]*`)

// passwordKeyword matches a password or user keyword of a connection
// string of keywords, at the start or after white space or a quote: its value runs
// to the next white space, or is quoted in single quotes (a quote inside
// escaped by a backslash).
var passwordKeyword = regexp.MustCompile(`(?i)(^|[\s"'` + "`" + `(])((?:ssl)?password\s*=\s*|user\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s"'` + "`" + `]*)`)

// Redact returns s with the user name and password of every URL in it
// (redis://, rediss://, unix://, their +cluster and +sentinel forms,
// postgres://, postgresql://, and any other scheme) replaced by "***",
// and every password=, sentinel_password=, sslpassword= or user= query
// parameter's value and password, sslpassword or user keyword's value
// too: "redis://admin:s3cret@db:6379/0" becomes "redis://***@db:6379/0",
// "host=db user=ops password=s3cret" becomes "host=db user=***
// password=***". A host:port has nothing to remove.
func Redact(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}"+redacted+"@")
	s = passwordParam.ReplaceAllString(s, "${1}"+redacted)
	return passwordKeyword.ReplaceAllString(s, "${1}${2}"+redacted)
}

// RedactingWriter returns a writer that writes to w what it is given,
// redacted (Redact). Each write must hold whole lines, as fmt's Fprint*
// and log/slog's handlers write them, so that no URL is split between
// writes. It is for a tool's standard error, where its errors and log
// lines go.
func RedactingWriter(w io.Writer) io.Writer { return redactingWriter{w} }

type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
