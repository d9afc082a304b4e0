package postgresconn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver/postgresconn"
)

func TestChosenIsPostgresByTheFlagOrTheVariableUnlessRedisIsNamed(t *testing.T) {
	given := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	const pg = "postgres://h/db"
	for _, tc := range []struct {
		name  string
		url   string // the Config's URL: from the flag or $STPE_POSTGRES_URL
		given map[string]bool
		env   map[string]string
		want  bool
		err   string
	}{
		{"nothing: Redis", "", given(), nil, false, ""},
		{"REDIS_URL alone: Redis", "", given(), map[string]string{"REDIS_URL": "r:1"}, false, ""},
		{"-postgres", pg, given("postgres"), nil, true, ""},
		{"$STPE_POSTGRES_URL", pg, given(), map[string]string{"STPE_POSTGRES_URL": pg}, true, ""},
		{"$STPE_POSTGRES_URL before REDIS_URL", pg, given(), map[string]string{"STPE_POSTGRES_URL": pg, "REDIS_URL": "r:1"}, true, ""},
		{"-postgres before $STPE_REDIS_URL", pg, given("postgres"), map[string]string{"STPE_REDIS_URL": "r:1"}, true, ""},
		{"-redis before $STPE_POSTGRES_URL", pg, given("redis"), map[string]string{"STPE_POSTGRES_URL": pg}, false, ""},
		{"-cluster before $STPE_POSTGRES_URL", pg, given("cluster", "prefix"), nil, false, ""},
		{"-prefix with Redis", "", given("prefix"), nil, false, ""},
		{"-postgres and -redis", pg, given("postgres", "redis"), nil, false, "-postgres and -redis: give one store, Redis or PostgreSQL"},
		{"-postgres and -sentinel-master", pg, given("postgres", "sentinel-master"), nil, false, "-postgres and -sentinel-master: give one store"},
		{"both variables", pg, given(), map[string]string{"STPE_POSTGRES_URL": pg, "STPE_REDIS_URL": "r:1"}, false,
			"$STPE_REDIS_URL and $STPE_POSTGRES_URL both name a store: give -redis or -postgres"},
		{"-prefix with -postgres", pg, given("postgres", "prefix"), nil, false, "-prefix names a keyspace in Redis"},
		{"-prefix with $STPE_POSTGRES_URL", pg, given("prefix"), nil, false, "-prefix names a keyspace in Redis"},
		{"-postgres empty", "", given("postgres"), nil, true, ""}, // Open says it is empty
	} {
		got, err := postgresconn.Config{URL: tc.url}.Chosen(tc.given, func(k string) string { return tc.env[k] })
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, scheduler.ErrInvalidArgument)):
			t.Errorf("%s: error %v, want %q wrapping ErrInvalidArgument", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: PostgreSQL %v, want %v", tc.name, got, tc.want)
		}
	}
}
