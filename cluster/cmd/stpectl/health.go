package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// stpectl health: the operator's view of the cluster from outside: the
// store answers (its version and round trip), enough live nodes, and the
// kinds with pending tasks that no live node handles. The probe of one
// node is Node.HealthHandler.

// healthJSON is health's document, written whether the cluster is healthy
// or not.
type healthJSON struct {
	// OK is true when the store answered within the -timeout and at
	// least -min-nodes live nodes are not stopping.
	OK bool `json:"ok"`
	// Reason says why not, or "".
	Reason string `json:"reason"`
	// Store is "redis" or "postgres".
	Store string `json:"store"`
	// Redis is the address as given, its credentials redacted ("" on
	// PostgreSQL).
	Redis string `json:"redis"`
	// Layout is "server", "cluster" (a Redis Cluster) or "sentinel" (a
	// master found through Sentinel); "" on PostgreSQL.
	Layout string `json:"layout"`
	// RedisVersion is the server's redis_version (the first master's on
	// a Redis Cluster).
	RedisVersion string `json:"redis_version"`
	// Postgres is the URL as given, its credentials redacted ("" on
	// Redis).
	Postgres string `json:"postgres"`
	// PostgresVersion is the server's server_version.
	PostgresVersion string `json:"postgres_version"`
	// RoundTripMicros is a PING's round trip in microseconds, on a
	// connection already open (the slowest master's on a Redis Cluster;
	// an empty statement's on PostgreSQL).
	RoundTripMicros int64 `json:"round_trip_us"`
	// Masters are the Redis servers that answered: the one server, or
	// each master of a Redis Cluster (none on PostgreSQL).
	Masters []masterJSON `json:"masters"`
	// Nodes counts the live nodes that are not stopping, Stopping those
	// that are.
	Nodes    int `json:"nodes"`
	Stopping int `json:"stopping"`
	// Counts is the tasks by state.
	Counts countsJSON `json:"counts"`
	// UnhandledKinds are the kinds with pending tasks that no live node
	// (not stopping) handles: they wait until one does.
	UnhandledKinds []unhandledJSON `json:"unhandled_kinds"`
}

// masterJSON is one Redis server that answered the health check.
type masterJSON struct {
	Addr            string `json:"addr"`
	RedisVersion    string `json:"redis_version"`
	RoundTripMicros int64  `json:"round_trip_us"`
}

// unhandledJSON is a kind no live node handles, and its pending tasks.
type unhandledJSON struct {
	Kind    string `json:"kind"`
	Pending int64  `json:"pending"`
}

// unhealthy is the error of a health check that found a fault; the report
// is already written.
type unhealthy struct{ reason string }

func (e *unhealthy) Error() string { return "stpectl: health: " + e.reason }

func healthCommand() *command {
	return &command{
		name:     "health",
		synopsis: "[-min-nodes N]",
		summary:  "check that the store answers and nodes are live; kinds no live node handles",
		// A prefix with no keyspace is a reason in its report.
		anyPrefix: true,
		define: func(fs *flag.FlagSet) runFunc {
			minNodes := fs.Int("min-nodes", 1, "unhealthy with fewer live nodes (not stopping) than this; 0 checks the store alone")
			return func(ctx context.Context, s *session, _ []string) error {
				if *minNodes < 0 {
					return usagef("health: -min-nodes %d: want 0 or more", *minNodes)
				}
				doc := healthJSON{Store: s.store.name(), Masters: []masterJSON{}, UnhandledKinds: []unhandledJSON{}}
				err := checkHealth(ctx, s, &doc)
				if err == nil && doc.Nodes < *minNodes {
					err = &refusal{why: fmt.Sprintf("%d live node(s), want at least %d", doc.Nodes, *minNodes)}
				}
				if err != nil {
					// The reason in stpectl's voice, without its "stpectl: health: ".
					msg := failure{what: "health", store: s.store.name(), addr: s.addr, named: s.store.named(),
						timeout: s.timeout, timedOut: ctx.Err() != nil}.message(err)
					doc.Reason = strings.TrimPrefix(msg, "stpectl: health: ")
				}
				doc.OK = err == nil
				if s.json {
					writeJSON(s.stdout, doc)
				} else {
					printHealth(s, doc)
				}
				if err != nil {
					return &unhealthy{reason: doc.Reason}
				}
				return nil
			}
		},
	}
}

// checkHealth fills doc, or says what failed.
func checkHealth(ctx context.Context, s *session, doc *healthJSON) error {
	if err := s.store.ping(ctx, doc); err != nil {
		return err
	}
	if err := s.store.checkKeyspace(ctx, s); err != nil {
		return err
	}
	members, err := s.node.Members(ctx)
	if err != nil {
		return err
	}
	var handled []string
	for _, m := range members {
		if m.Stopping {
			doc.Stopping++
			continue
		}
		doc.Nodes++
		handled = append(handled, m.Kinds...)
	}
	total, kinds, err := s.node.CountsByKind(ctx)
	if err != nil {
		return err
	}
	doc.Counts = newCountsJSON(total)
	for _, k := range kinds {
		if k.Pending > 0 && !slices.Contains(handled, k.Kind) {
			doc.UnhandledKinds = append(doc.UnhandledKinds, unhandledJSON{Kind: k.Kind, Pending: k.Pending})
		}
	}
	return nil
}

// printHealth writes the report as text.
func printHealth(s *session, doc healthJSON) {
	w := s.stdout
	if doc.OK {
		fmt.Fprintln(w, "ok")
	} else {
		fmt.Fprintf(w, "unhealthy: %s\n", doc.Reason)
	}
	if doc.RedisVersion != "" || doc.PostgresVersion != "" {
		rtt := (time.Duration(doc.RoundTripMicros) * time.Microsecond).Round(10 * time.Microsecond)
		switch {
		case doc.Store == "postgres":
			fmt.Fprintf(w, "postgres: PostgreSQL %s at %s, round trip %v\n", doc.PostgresVersion, doc.Postgres, rtt)
		case doc.Layout == "cluster":
			fmt.Fprintf(w, "redis:  Redis Cluster of %d masters (%s), at %s, slowest round trip %v\n", len(doc.Masters), doc.RedisVersion, doc.Redis, rtt)
		case doc.Layout == "sentinel":
			fmt.Fprintf(w, "redis:  %s, master found through Sentinel at %s, round trip %v\n", doc.RedisVersion, doc.Redis, rtt)
		default:
			fmt.Fprintf(w, "redis:  %s at %s, round trip %v\n", doc.RedisVersion, doc.Redis, rtt)
		}
		fmt.Fprintf(w, "nodes:  %d live, %d stopping\n", doc.Nodes, doc.Stopping)
		fmt.Fprintf(w, "tasks:  %d pending, %d running, %d dead, %d done\n", doc.Counts.Pending, doc.Counts.Running, doc.Counts.Dead, doc.Counts.Done)
	}
	for _, u := range doc.UnhandledKinds {
		fmt.Fprintf(w, "warning: %d pending task(s) of kind %s, which no live node handles\n", u.Pending, cell(u.Kind))
	}
}
