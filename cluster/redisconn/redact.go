package redisconn

import "regexp"

// Redaction: a Redis URL's credentials ride in its user information
// (redis://user:password@host) and, in the URLs go-redis's
// ParseFailoverURL reads, in its query (password=, sentinel_password=).
// Redact replaces both with "***", wherever in a text such a URL stands.

// redacted is what stands in for removed credentials.
const redacted = "***"

// userinfo matches a URL's scheme and its user information, up to the
// last "@" before the host: the authority ends at "/", "?", "#", white
// space or a quote, and a password may hold "@", so the match is greedy.
// Any scheme matches, so that a mistyped one (redis:/, rdis://) is
// redacted too.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s"'<>` + "`" + `]*@`)

// passwordParam matches a password parameter of a URL's query.
var passwordParam = regexp.MustCompile(`(?i)([?&](?:sentinel_)?password=)[^&#\s"'<>` + "`" + `]*`)

// Redact returns s with the user name and password of every URL in it
// (redis://, rediss://, unix://, their +cluster and +sentinel forms, and
// any other scheme) replaced by "***", and every password= or
// sentinel_password= query parameter's value too: "redis://admin:s3cret@db:6379/0" becomes
// "redis://***@db:6379/0". A host:port has nothing to remove.
func Redact(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}"+redacted+"@")
	return passwordParam.ReplaceAllString(s, "${1}"+redacted)
}
