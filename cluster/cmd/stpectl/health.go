package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"
)

// stpectl health: whether the cluster's Redis answers, how fast, and what
// it holds. The probe of one node is Node.HealthHandler; this is the
// operator's view from outside.

// healthJSON is health's document.
type healthJSON struct {
	// OK is true when Redis answered within the -timeout.
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
	// Counts is the tasks by state.
	Counts countsJSON `json:"counts"`
}

func healthCommand() *command {
	return &command{
		name:    "health",
		summary: "check that Redis answers, with its version, round trip and the counts",
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, _ []string) error {
				doc := healthJSON{Redis: s.addr}
				err := checkHealth(ctx, s, &doc)
				if err != nil {
					doc.Reason = err.Error()
				}
				doc.OK = err == nil
				if s.json {
					if err != nil {
						return err // the error document, on stdout
					}
					writeJSON(s.stdout, doc)
					return nil
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(s.stdout, "ok: redis %s at %s answered in %v\n", doc.RedisVersion, doc.Redis,
					time.Duration(doc.RoundTripMicros)*time.Microsecond)
				fmt.Fprintf(s.stdout, "tasks: %d pending, %d running, %d dead, %d done\n", doc.Counts.Pending, doc.Counts.Running, doc.Counts.Dead, doc.Counts.Done)
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
			return fmt.Errorf("stpectl: health: redis at %s did not answer: %w", s.addr, err)
		}
		doc.RoundTripMicros = time.Since(start).Microseconds()
	}
	info, err := s.rdb.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("stpectl: health: redis INFO: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			doc.RedisVersion = v
		}
	}
	c, err := s.node.Counts(ctx)
	if err != nil {
		return err
	}
	doc.Counts = newCountsJSON(c)
	return nil
}
