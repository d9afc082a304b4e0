package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// A visitor's preferences: how often pages refresh themselves and the zone
// times are shown in. Each is chosen with a query parameter (the header's
// switches are plain GET forms, so they work without JavaScript) and kept
// in a cookie for the pages that follow.

const (
	refreshCookie = "stpe_refresh"
	zoneCookie    = "stpe_tz"
)

// refreshChoices are the refresh intervals offered, in seconds; 0 is off.
var refreshChoices = []int{0, 2, 5, 30}

// prefs is what a request asked for.
type prefs struct {
	Refresh int // seconds between refreshes, 0 for none
	Zone    *time.Location
}

// readPrefs reads the preferences from the query, else the cookies, and
// keeps the query's in cookies. A value that is not offered is an error
// wrapping ErrInvalidArgument; a bad cookie is ignored.
func readPrefs(w http.ResponseWriter, r *http.Request) (prefs, error) {
	p := prefs{Zone: time.UTC}
	q := r.URL.Query()
	if v := q.Get("refresh"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || !slices.Contains(refreshChoices, n) {
			return p, fmt.Errorf("%w: refresh %q: must be one of 0 (off), 2, 5 or 30 seconds", ErrInvalidArgument, v)
		}
		p.Refresh = n
		setPref(w, r, refreshCookie, v)
	} else if c, err := r.Cookie(refreshCookie); err == nil {
		if n, err := strconv.Atoi(c.Value); err == nil && slices.Contains(refreshChoices, n) {
			p.Refresh = n
		}
	}
	if v := q.Get("tz"); v != "" {
		loc, err := loadZone(v)
		if err != nil {
			return p, fmt.Errorf("%w: time zone %q: not a zone name such as UTC or Europe/Paris", ErrInvalidArgument, v)
		}
		p.Zone = loc
		setPref(w, r, zoneCookie, v)
	} else if c, err := r.Cookie(zoneCookie); err == nil {
		if loc, err := loadZone(c.Value); err == nil {
			p.Zone = loc
		}
	}
	return p, nil
}

// loadZone is time.LoadLocation without "Local", which would be the
// server's zone under a name that says nothing.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || name == "" {
		return nil, fmt.Errorf("no zone named %q", name)
	}
	return time.LoadLocation(name)
}

func setPref(w http.ResponseWriter, r *http.Request, name, value string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
}

// zoneOf is the zone the request's pages show times in (readPrefs'
// choice), UTC if none or a bad one.
func zoneOf(r *http.Request) *time.Location {
	name := r.URL.Query().Get("tz")
	if name == "" {
		if c, err := r.Cookie(zoneCookie); err == nil {
			name = c.Value
		}
	}
	if loc, err := loadZone(name); err == nil {
		return loc
	}
	return time.UTC
}
