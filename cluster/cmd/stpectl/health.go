package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// stpectl health: the operator's view of the cluster from outside: Redis
// answers (its version and round trip), enough live nodes, and the kinds
// with pending tasks that no live node handles. The probe of one node is
// Node.HealthHandler.

// healthJSON is health's document, written whether the cluster is healthy
// or not.
type healthJSON struct {
	// OK is true when Redis answered within the -timeout and at least
	// -min-nodes live nodes are not stopping.
	OK bool `json:"ok"`
	// Reason says why not, or "".
	Reason string `json:"reason"`
	// Redis is the address as given.
	Redis string `json:"redis"`
	// RedisVersion is the server's redis_version.
	RedisVersion string `json:"redis_version"`
	// RoundTripMicros is a PING's round trip in microseconds, on a
	// connection already open.
	RoundTripMicros int64 `json:"round_trip_us"`
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
		summary:  "check that Redis answers and nodes are live; kinds no live node handles",
		define: func(fs *flag.FlagSet) runFunc {
			minNodes := fs.Int("min-nodes", 1, "unhealthy with fewer live nodes (not stopping) than this; 0 checks Redis alone")
			return func(ctx context.Context, s *session, _ []string) error {
				if *minNodes < 0 {
					return usagef("health: -min-nodes %d: want 0 or more", *minNodes)
				}
				doc := healthJSON{Redis: s.addr, UnhandledKinds: []unhandledJSON{}}
				err := checkHealth(ctx, s, &doc)
				if err == nil && doc.Nodes < *minNodes {
					err = fmt.Errorf("%d live node(s), want at least %d", doc.Nodes, *minNodes)
				}
				if err != nil {
					doc.Reason = err.Error()
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
	// The first PING dials; the second measures the round trip alone.
	for range 2 {
		start := time.Now()
		if err := s.rdb.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis at %s did not answer: %w", s.addr, err)
		}
		doc.RoundTripMicros = time.Since(start).Microseconds()
	}
	info, err := s.rdb.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("redis INFO: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			doc.RedisVersion = v
		}
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
	if doc.RedisVersion != "" {
		fmt.Fprintf(w, "redis:  %s at %s, round trip %v\n", doc.RedisVersion, doc.Redis, time.Duration(doc.RoundTripMicros)*time.Microsecond)
		fmt.Fprintf(w, "nodes:  %d live, %d stopping\n", doc.Nodes, doc.Stopping)
		fmt.Fprintf(w, "tasks:  %d pending, %d running, %d dead, %d done\n", doc.Counts.Pending, doc.Counts.Running, doc.Counts.Dead, doc.Counts.Done)
	}
	for _, u := range doc.UnhandledKinds {
		fmt.Fprintf(w, "warning: %d pending task(s) of kind %s, which no live node handles\n", u.Pending, cell(u.Kind))
	}
}
