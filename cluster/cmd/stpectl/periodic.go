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

// stpectl periodic: the periodic tasks the live nodes declare, with their
// next time and last run (asynq's Inspector.SchedulerEntries, asynq cron
// ls).

// periodicJSON is one declared periodic task.
type periodicJSON struct {
	Name    string `json:"name"`
	Trigger string `json:"trigger"`
	// Next is the trigger's next time, null if it has no more.
	Next *time.Time `json:"next"`
	// Nodes are the live nodes declaring it.
	Nodes []string `json:"nodes"`
	// LastRun is the last run recorded, null if none.
	LastRun *periodicRunJSON `json:"last_run"`
}

// periodicRunJSON is one run of an occurrence.
type periodicRunJSON struct {
	Node    string    `json:"node"`
	Due     time.Time `json:"due"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Outcome string    `json:"outcome"`
	Error   string    `json:"error"`
}

// periodicDocJSON is periodic's document.
type periodicDocJSON struct {
	Periodic []periodicJSON `json:"periodic"`
}

func newPeriodicJSON(p cluster.PeriodicInfo) periodicJSON {
	doc := periodicJSON{Name: p.Name, Trigger: p.Trigger, Next: utcOrNil(p.Next), Nodes: p.Nodes}
	if doc.Nodes == nil {
		doc.Nodes = []string{}
	}
	if r := p.LastRun; r != nil {
		doc.LastRun = &periodicRunJSON{Node: r.Node, Due: r.Due.UTC(), Started: r.Started.UTC(), Ended: r.Ended.UTC(),
			Outcome: string(r.Outcome), Error: r.Error}
	}
	return doc
}

func periodicCommand() *command {
	return &command{
		name:    "periodic",
		summary: "list the periodic tasks the live nodes declare, with their next time and last run",
		define: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, s *session, _ []string) error {
				tasks, err := s.node.PeriodicTasks(ctx)
				if err != nil {
					return err
				}
				if s.json {
					doc := periodicDocJSON{Periodic: make([]periodicJSON, 0, len(tasks))}
					for _, p := range tasks {
						doc.Periodic = append(doc.Periodic, newPeriodicJSON(p))
					}
					writeJSON(s.stdout, doc)
					return nil
				}
				if len(tasks) == 0 {
					fmt.Fprintln(s.stdout, "no periodic task declared by a live node")
					return nil
				}
				now := time.Now()
				tw := tabwriter.NewWriter(s.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTRIGGER\tNEXT\tNODES\tLAST RUN")
				for _, p := range tasks {
					next := "-"
					if !p.Next.IsZero() {
						next = formatTime(p.Next, now)
					}
					last := "-"
					if r := p.LastRun; r != nil {
						last = fmt.Sprintf("%s %s on %s", r.Outcome, formatTime(r.Started, now), cell(r.Node))
						if r.Error != "" {
							last += ": " + firstLine(r.Error, 60)
						}
					}
					nodes := make([]string, len(p.Nodes))
					for i, n := range p.Nodes {
						nodes[i] = cell(n)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(p.Name), firstLine(p.Trigger, 40), next, strings.Join(nodes, ","), last)
				}
				return tw.Flush()
			}
		},
	}
}
