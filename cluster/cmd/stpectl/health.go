package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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
	// Redis is the address as given, its credentials redacted.
	Redis string `json:"redis"`
	// Layout is "server", "cluster" (a Redis Cluster) or "sentinel" (a
	// master found through Sentinel).
	Layout string `json:"layout"`
	// RedisVersion is the server's redis_version (the first master's on
	// a Redis Cluster).
	RedisVersion string `json:"redis_version"`
	// RoundTripMicros is a PING's round trip in microseconds, on a
	// connection already open (the slowest master's on a Redis Cluster).
	RoundTripMicros int64 `json:"round_trip_us"`
	// Masters are the servers that answered: the one server, or each
	// master of a Redis Cluster.
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
		summary:  "check that Redis answers and nodes are live; kinds no live node handles",
		define: func(fs *flag.FlagSet) runFunc {
			minNodes := fs.Int("min-nodes", 1, "unhealthy with fewer live nodes (not stopping) than this; 0 checks Redis alone")
			return func(ctx context.Context, s *session, _ []string) error {
				if *minNodes < 0 {
					return usagef("health: -min-nodes %d: want 0 or more", *minNodes)
				}
				doc := healthJSON{Redis: s.addr, Layout: layoutOf(s.rdb), Masters: []masterJSON{}, UnhandledKinds: []unhandledJSON{}}
				err := checkHealth(ctx, s, &doc)
				if err == nil && doc.Nodes < *minNodes {
					err = &refusal{why: fmt.Sprintf("%d live node(s), want at least %d", doc.Nodes, *minNodes)}
				}
				if err != nil {
					// The reason in stpectl's voice, without its "stpectl: health: ".
					msg := failure{what: "health", addr: s.addr, timeout: s.timeout}.message(err)
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
	if err := pingMasters(ctx, s, doc); err != nil {
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

// pingMasters measures each master's round trip and reads its version:
// the one server, or every master of a Redis Cluster, which must also
// report its state ok.
func pingMasters(ctx context.Context, s *session, doc *healthJSON) error {
	var mu sync.Mutex // guards doc.Masters: ForEachMaster asks the masters at once
	ping := func(ctx context.Context, c *redis.Client) error {
		m := masterJSON{Addr: s.addr}
		if _, ok := s.rdb.(*redis.ClusterClient); ok {
			m.Addr = c.Options().Addr
		}
		// The first PING dials; the second measures the round trip alone.
		for range 2 {
			start := time.Now()
			if err := c.Ping(ctx).Err(); err != nil {
				return err
			}
			m.RoundTripMicros = time.Since(start).Microseconds()
		}
		info, err := c.Info(ctx, "server").Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
				m.RedisVersion = v
			}
		}
		mu.Lock()
		doc.Masters = append(doc.Masters, m)
		mu.Unlock()
		return nil
	}
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		state, err := c.ClusterInfo(ctx).Result()
		if err != nil {
			return err
		}
		if !strings.Contains(state, "cluster_state:ok") {
			return errors.New("the Redis Cluster reports cluster_state:fail")
		}
		if err := c.ForEachMaster(ctx, ping); err != nil {
			return err
		}
	case *redis.Client:
		if err := ping(ctx, c); err != nil {
			return err
		}
	default:
		return fmt.Errorf("a %T client cannot be checked", s.rdb)
	}
	slices.SortFunc(doc.Masters, func(a, b masterJSON) int { return strings.Compare(a.Addr, b.Addr) })
	doc.RedisVersion = doc.Masters[0].RedisVersion
	for _, m := range doc.Masters {
		doc.RoundTripMicros = max(doc.RoundTripMicros, m.RoundTripMicros)
	}
	return nil
}

// layoutOf names the Redis layout rdb reaches.
func layoutOf(rdb redis.UniversalClient) string {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return "cluster"
	case *redis.Client:
		if c.Options().Addr == "FailoverClient" {
			return "sentinel"
		}
	}
	return "server"
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
		rtt := (time.Duration(doc.RoundTripMicros) * time.Microsecond).Round(10 * time.Microsecond)
		switch doc.Layout {
		case "cluster":
			fmt.Fprintf(w, "redis:  Redis Cluster of %d masters (%s), at %s, slowest round trip %v\n", len(doc.Masters), doc.RedisVersion, doc.Redis, rtt)
		case "sentinel":
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
