package main

import (
	"fmt"
	"sort"
	"strings"
)

// report collects the passes and prints the tables, the targets and the
// details.
type report struct {
	lifecycles  []lifecycleResult
	drains      []drainResult
	spread      spreadResult
	windowBytes float64 // Go heap per task in a node's window
	windowHeld  int     // the tasks the window held
}

// Targets: at most maxTrips round trips per task; bytes per task at the
// most nodes within maxBytesGrowth of the 1-node figure; each of N nodes
// holds at most 2/N of the near-due tasks; each master within maxKeyDeviation
// of the mean key count.
const (
	maxTrips        = 3.0
	maxBytesGrowth  = 1.2
	maxKeyDeviation = 0.10
)

func (rep *report) print(counts []int) {
	fmt.Printf("\n## Per task lifecycle (schedule, claim, complete)\n\n")
	fmt.Printf("| Redis | nodes | commands / task | round trips / task: all (scripts) | scripts / task by name | bytes sent / task | Redis CPU µs / task: process (in commands) | published / task | delivered / task | fullest window / near-due (mean; peak) | idle fleet: commands/s, round trips/s, Redis CPU %% |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.lifecycles {
		tasks := float64(*taskCount)
		per := func(k int64) float64 { return float64(k) / tasks }
		secs := r.idleTime.Seconds()
		fmt.Printf("| %s | %d | %.1f | %.2f (%.2f) | %s | %.0f | %.0f (%.0f) | %.2f | %.2f | %.0f%% ; %.0f%% | %.0f, %.1f, %.1f%% |\n",
			r.redis, r.nodes, per(r.d.commands), per(r.t.total), per(r.t.scripts), scriptSplit(r.scripts, tasks), per(r.d.outBytes),
			1e6*r.d.cpu/tasks, per(r.d.usec), per(r.d.publishes), per(r.d.publishes)*r.subs,
			100*r.share, 100*r.peakShare, float64(r.idle.commands)/secs, float64(r.idleTrips.total)/secs, 100*r.idle.cpu/secs)
	}

	fmt.Printf("\n## Drain: %d tasks all due, time until each ran once\n\n", *drainCount)
	fmt.Printf("| Redis | system | nodes / servers | tasks/s | commands / task | round trips / task: all (scripts) | bytes sent / task | Redis CPU µs / task: process (in commands) | ran twice |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.drains {
		tasks := float64(*drainCount)
		fmt.Printf("| %s | %s | %d | %.0f | %.1f | %.2f (%.2f) | %.0f | %.0f (%.0f) | %d |\n", r.redis, r.system, r.nodes, r.rate,
			float64(r.d.commands)/tasks, float64(r.t.total)/tasks, float64(r.t.scripts)/tasks, float64(r.d.outBytes)/tasks, 1e6*r.d.cpu/tasks, float64(r.d.usec)/tasks, r.duplicates)
	}

	if len(rep.spread.masters) > 0 {
		s := rep.spread
		var total int64
		for _, m := range s.masters {
			total += m.keys
		}
		mean := float64(total) / float64(len(s.masters))
		fmt.Printf("\n## Keys of %d tasks over the Redis Cluster's masters (DBSIZE)\n\n", s.tasks)
		fmt.Printf("| master | slots | keys | from the mean | used memory |\n|---|---|---|---|---|\n")
		for i, m := range s.masters {
			fmt.Printf("| %d | %s | %d | %+.1f%% | %s |\n", i+1, m.slots, m.keys, 100*(float64(m.keys)-mean)/mean, m.memory)
		}
	}

	if rep.windowBytes > 0 {
		fmt.Printf("\nA node's window: %.0f B of Go heap per task (%d tasks loaded by one node, payload %d B)\n", rep.windowBytes, rep.windowHeld, *payloadSize)
	}
	if s := rep.spread; s.tasks > 0 {
		fmt.Printf("Redis memory: %.0f B of used_memory per stored task, over the masters (%d tasks due in an hour, payload %d B; replicas hold as much again)\n",
			float64(s.memory)/float64(s.tasks), s.tasks, *payloadSize)
	}

	fmt.Printf("\n## Targets\n\n")
	for _, r := range rep.lifecycles {
		scripts := float64(r.t.scripts) / float64(*taskCount)
		all := float64(r.t.total) / float64(*taskCount)
		verdict("script round trips (EVALSHA, EVAL) per task <= 3", scripts <= maxTrips,
			fmt.Sprintf("%s, %d nodes: %.3f (every round trip, the background's pipelines and connections' HELLO included: %.3f)", r.redis, r.nodes, scripts, all))
	}
	for _, name := range rep.redisNames() {
		one, most := rep.lifecycleOf(name, counts[0]), rep.lifecycleOf(name, counts[len(counts)-1])
		if one == nil || most == nil || one.nodes == most.nodes {
			continue
		}
		ratio := float64(most.d.outBytes) / float64(one.d.outBytes)
		verdict(fmt.Sprintf("bytes per task at %d nodes <= 1.2x at %d", most.nodes, one.nodes), ratio <= maxBytesGrowth,
			fmt.Sprintf("%s: %.0f / %.0f = %.2fx", name, float64(most.d.outBytes)/float64(*taskCount), float64(one.d.outBytes)/float64(*taskCount), ratio))
	}
	for _, r := range rep.lifecycles {
		limit := min(1, 2/float64(r.nodes))
		verdict("each of N nodes holds <= 2/N of the near-due tasks", r.share <= limit,
			fmt.Sprintf("%s, %d nodes: fullest %.0f%% (peak %.0f%%), limit %.0f%%", r.redis, r.nodes, 100*r.share, 100*r.peakShare, 100*limit))
	}
	if len(rep.spread.masters) > 0 {
		dev := rep.spread.deviation()
		verdict("keys within +-10% per master", dev <= maxKeyDeviation, fmt.Sprintf("largest deviation %.1f%%", 100*dev))
	}
	for _, r := range rep.lifecycles {
		verdict("no task runs twice", r.duplicates == 0, fmt.Sprintf("%s, %d nodes, lifecycle: %d", r.redis, r.nodes, r.duplicates))
	}
	for _, r := range rep.drains {
		verdict("no task runs twice", r.duplicates == 0, fmt.Sprintf("%s, %s, %d, drain: %d", r.redis, r.system, r.nodes, r.duplicates))
	}

	fmt.Printf("\n## Details\n\n")
	for _, r := range rep.lifecycles {
		fmt.Printf("%s, %d nodes, lifecycle: %d event channels, %.2f subscribers each\n", r.redis, r.nodes, r.channels, r.subs)
		fmt.Printf("  Redis commands: %s\n", byCount(r.d.byCommand))
		fmt.Printf("  round trips: %s\n", byCount(r.t.byCommand))
		fmt.Printf("  scripts: %s\n", byCount(r.scripts.byCommand))
		fmt.Printf("  idle %.1fs: commands %s; round trips %s\n", r.idleTime.Seconds(), byCount(r.idle.byCommand), byCount(r.idleTrips.byCommand))
	}
	for _, r := range rep.drains {
		fmt.Printf("%s, %s, %d, drain:\n  Redis commands: %s\n  round trips: %s\n", r.redis, r.system, r.nodes, byCount(r.d.byCommand), byCount(r.t.byCommand))
	}
}

func verdict(target string, ok bool, measured string) {
	v := "PASS"
	if !ok {
		v = "FAIL"
	}
	fmt.Printf("- %s %s: %s\n", v, target, measured)
}

// scriptSplit is the script calls per task by script: the lifecycle's
// three, then the others together.
func scriptSplit(t trips, tasks float64) string {
	var parts []string
	var other int64
	for _, name := range []string{"schedule", "claim", "complete"} {
		parts = append(parts, fmt.Sprintf("%s %.2f", name, float64(t.byCommand[name])/tasks))
	}
	for name, k := range t.byCommand {
		if name != "schedule" && name != "claim" && name != "complete" {
			other += k
		}
	}
	return strings.Join(parts, " + ") + fmt.Sprintf(" + other %.2f", float64(other)/tasks)
}

// byCount lists counts, the largest first.
func byCount(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if m[names[i]] != m[names[j]] {
			return m[names[i]] > m[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %d", name, m[name]))
	}
	return strings.Join(parts, ", ")
}

func (rep *report) redisNames() []string {
	var names []string
	for _, r := range rep.lifecycles {
		if len(names) == 0 || names[len(names)-1] != r.redis {
			names = append(names, r.redis)
		}
	}
	return names
}

func (rep *report) lifecycleOf(redisName string, nodes int) *lifecycleResult {
	for i, r := range rep.lifecycles {
		if r.redis == redisName && r.nodes == nodes {
			return &rep.lifecycles[i]
		}
	}
	return nil
}
