package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// stpectl nodes: the live nodes of the prefix as their records in Redis
// show them (asynq's Inspector.Servers, asynq server ls).

// nodeJSON is one live node.
type nodeJSON struct {
	Name    string    `json:"name"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Heartbeat is the last renewal of the node's record; Expires when
	// the record goes unless renewed.
	Heartbeat   time.Time `json:"heartbeat"`
	Expires     time.Time `json:"expires"`
	Concurrency int       `json:"concurrency"`
	Running     int       `json:"running"`
	Windowed    int       `json:"windowed"`
	Waiting     int       `json:"waiting"`
	// Partitions counts the partitions the node owned and backed up.
	Partitions partitionsJSON `json:"partitions"`
	Kinds      []string       `json:"kinds"`
	Stopping   bool           `json:"stopping"`
}

// partitionsJSON is a node's share of the partitions.
type partitionsJSON struct {
	Owned    int `json:"owned"`
	BackedUp int `json:"backed_up"`
}

// nodesJSON is nodes' document.
type nodesJSON struct {
	Nodes []nodeJSON `json:"nodes"`
}

func newNodeJSON(m cluster.Member) nodeJSON {
	kinds := m.Kinds
	if kinds == nil {
		kinds = []string{}
	}
	return nodeJSON{Name: m.Name, Host: m.Host, PID: m.PID, Version: m.Version, Started: m.Started.UTC(),
		Heartbeat: m.Heartbeat.UTC(), Expires: m.Expires.UTC(), Concurrency: m.Concurrency,
		Running: m.Running, Windowed: m.Windowed, Waiting: m.Waiting,
		Partitions: partitionsJSON{Owned: m.Owned, BackedUp: m.BackedUp}, Kinds: kinds, Stopping: m.Stopping}
}

func nodesCommand() *command {
	return &command{
		name:    "nodes",
		summary: "list the live nodes: host, pid, version, load, kinds handled",
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, _ []string) error {
				members, err := s.node.Members(ctx)
				if err != nil {
					return err
				}
				if s.json {
					doc := nodesJSON{Nodes: make([]nodeJSON, 0, len(members))}
					for _, m := range members {
						doc.Nodes = append(doc.Nodes, newNodeJSON(m))
					}
					writeJSON(s.stdout, doc)
					return nil
				}
				if len(members) == 0 {
					fmt.Fprintln(s.stdout, "no live node")
					return nil
				}
				now := time.Now()
				tw := tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tHOST\tPID\tVERSION\tSTARTED\tHEARTBEAT\tRUNNING\tWINDOWED\tWAITING\tPARTITIONS\tSTATE\tKINDS")
				for _, m := range members {
					state := "up"
					if m.Stopping {
						state = "stopping"
					}
					kinds := make([]string, len(m.Kinds))
					for i, k := range m.Kinds {
						kinds[i] = cell(k)
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d/%d\t%d\t%d\t%d+%d\t%s\t%s\n", cell(m.Name), cell(m.Host), m.PID, cell(m.Version),
						formatTime(m.Started, now), formatTime(m.Heartbeat, now), m.Running, m.Concurrency, m.Windowed, m.Waiting,
						m.Owned, m.BackedUp, state, strings.Join(kinds, ","))
				}
				return tw.Flush()
			}
		},
	}
}
