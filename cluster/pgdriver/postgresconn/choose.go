package postgresconn

import (
	"fmt"
	"strings"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// redisFlags are the flags of package redisconn, which name a Redis.
var redisFlags = []string{"redis", "cluster", "sentinel-master"}

// choiceError is a choice of store that contradicts itself, said as the
// flags and variables name it; it wraps scheduler.ErrInvalidArgument.
type choiceError struct{ why string }

func (e *choiceError) Error() string { return e.why }

func (e *choiceError) Unwrap() error { return scheduler.ErrInvalidArgument }

// Chosen reports whether a tool that reads both stores' flags uses
// PostgreSQL rather than Redis, given the names of the flags its command
// line set (given) and the environment (getenv): yes when -postgres is
// given, or when $STPE_POSTGRES_URL is set (c.URL is not empty) and no
// flag of redisconn (-redis, -cluster, -sentinel-master) is. A choice that
// contradicts itself is an error wrapping scheduler.ErrInvalidArgument
// that says so: -postgres with a flag of redisconn, $STPE_POSTGRES_URL
// with $STPE_REDIS_URL and neither -postgres nor a flag of redisconn, or
// PostgreSQL with -prefix (a Redis keyspace's; in PostgreSQL the database
// is the keyspace).
func (c Config) Chosen(given map[string]bool, getenv func(string) string) (bool, error) {
	redisGiven := ""
	for _, name := range redisFlags {
		if given[name] {
			redisGiven = name
			break
		}
	}
	switch {
	case given["postgres"] && redisGiven != "":
		return false, &choiceError{why: fmt.Sprintf("-postgres and -%s: give one store, Redis or PostgreSQL", redisGiven)}
	case redisGiven != "", !given["postgres"] && c.URL == "":
		return false, nil
	case !given["postgres"] && strings.TrimSpace(getenv(redisconn.EnvURL)) != "":
		return false, &choiceError{why: fmt.Sprintf("$%s and $%s both name a store: give -redis or -postgres", redisconn.EnvURL, EnvURL)}
	case given["prefix"]:
		return false, &choiceError{why: "-prefix names a keyspace in Redis; in PostgreSQL the database (and the schema its search_path finds) is the keyspace"}
	}
	return true, nil
}
