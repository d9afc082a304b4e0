package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// Bulk actions: run, retry, cancel and delete act on every task a
// selection picks when given -all instead of an ID (asynq's task runall,
// archiveall and deleteall; River's JobRetryMany-style batch), with the
// same flags each: -state, -kind, -before, and -dry-run to count what
// would be acted on. Each is one call of the cluster module
// (Node.RetryAll, DeleteAll, CancelAll, RunNowAll; CountSelected for
// -dry-run), which checks every task's state as it acts, so a task that
// moved on meanwhile is matched but not changed.

// bulkAction is how a command acts on a selection.
type bulkAction struct {
	doing  string          // what it does, for the report: "retry"
	done   string          // what it did: "retried"
	states []cluster.State // the states it takes, the default first
	// stateRequired makes -state required: no state is the default
	// (cancel, which takes every state).
	stateRequired bool
	act           func(*cluster.Node, context.Context, cluster.Selection) (cluster.BulkResult, error)
}

// bulkJSON is the document of a bulk action.
type bulkJSON struct {
	// Action is "run", "retry", "cancel" or "delete".
	Action string `json:"action"`
	State  string `json:"state"`
	// Kind is the kind selected, "" for every kind.
	Kind string `json:"kind"`
	// Before is the -before cut, null without one.
	Before *time.Time `json:"before"`
	// DryRun is true when nothing was changed: Matched is what would be.
	DryRun bool `json:"dry_run"`
	// Matched counts the tasks the selection matched; Changed those the
	// action changed (a task that moved on meanwhile is matched only).
	Matched int `json:"matched"`
	Changed int `json:"changed"`
}

// bulkFlags are the flags of a command's bulk form.
type bulkFlags struct {
	all    *bool
	state  *string
	kind   *string
	before *string
	dryRun *bool
}

// defineBulk registers the bulk flags of b on fs.
func defineBulk(fs *flag.FlagSet, b *bulkAction) *bulkFlags {
	names := stateNames(b.states)
	def, usage := names[0], "with -all, the `state` of the tasks: "+orList(names)
	if b.stateRequired {
		def, usage = "", usage+" (required)"
	}
	return &bulkFlags{
		all:    fs.Bool("all", false, "act on every task the selection flags pick, instead of one ID"),
		state:  fs.String("state", def, usage),
		kind:   fs.String("kind", "", "with -all, only the tasks of this `kind`"),
		before: fs.String("before", "", "with -all, only the tasks that entered their state before this `time` (RFC 3339 or -2h)"),
		dryRun: fs.Bool("dry-run", false, "with -all, count the tasks it would act on and change nothing"),
	}
}

// bulkSynopsis is the usage of a command that takes an ID or -all.
func bulkSynopsis(b *bulkAction) string {
	names := stateNames(b.states)
	state := "-state " + strings.Join(names, "|")
	if !b.stateRequired {
		state = "[" + state + "]"
	}
	return "ID | -all " + state + " [-kind K] [-before TIME] [-dry-run]"
}

// selection reads the flags into a cluster.Selection, or says why not.
func (f *bulkFlags) selection(name string, b *bulkAction, now time.Time) (cluster.Selection, error) {
	sel := cluster.Selection{State: cluster.State(*f.state), Kind: *f.kind}
	names := stateNames(b.states)
	ok := false
	for _, st := range b.states {
		ok = ok || sel.State == st
	}
	switch {
	case *f.state == "" && b.stateRequired:
		return sel, usagef("%s: -all wants a -state (%s)", name, orList(names))
	case !ok:
		return sel, usagef("%s: -state %q: want %s", name, *f.state, orList(names))
	}
	if *f.before != "" {
		t, err := parseTime(*f.before, now)
		if err != nil {
			return sel, err
		}
		sel.Before = t
	}
	return sel, nil
}

// dispatch runs the bulk form when -all is given (done is true then),
// refuses a selection flag given without -all, and otherwise leaves the
// command to act on its one ID.
func (f *bulkFlags) dispatch(ctx context.Context, s *session, fs *flag.FlagSet, name string, b *bulkAction) (done bool, err error) {
	if *f.all {
		return true, runBulk(ctx, s, name, b, f)
	}
	if used := f.usedWithoutAll(fs); used != "" {
		return true, usagef("%s: -%s goes with -all", name, used)
	}
	return false, nil
}

// usedWithoutAll names a selection flag given without -all, or "".
func (f *bulkFlags) usedWithoutAll(fs *flag.FlagSet) string {
	if *f.all {
		return ""
	}
	used := ""
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "state", "kind", "before", "dry-run":
			used = fl.Name
		}
	})
	return used
}

// runBulk acts on the selection (or counts it, with -dry-run) and
// reports what it did.
func runBulk(ctx context.Context, s *session, name string, b *bulkAction, f *bulkFlags) error {
	now := time.Now()
	sel, err := f.selection(name, b, now)
	if err != nil {
		return err
	}
	doc := bulkJSON{Action: name, State: string(sel.State), Kind: sel.Kind, DryRun: *f.dryRun}
	if !sel.Before.IsZero() {
		utc := sel.Before.UTC().Truncate(time.Microsecond)
		doc.Before = &utc
	}
	if *f.dryRun {
		n, err := s.node.CountSelected(ctx, sel)
		if err != nil {
			return err
		}
		doc.Matched = n
	} else {
		res, err := b.act(s.node, ctx, sel)
		if err != nil && res.Changed > 0 {
			return &hinted{err: err, hint: fmt.Sprintf("%s %d task(s) before that; run it again for the rest", b.done, res.Changed)}
		}
		if err != nil {
			return err
		}
		doc.Matched, doc.Changed = res.Matched, res.Changed
	}
	if s.json {
		writeJSON(s.stdout, doc)
		return nil
	}
	what := fmt.Sprintf("%s task(s)", sel.State)
	if sel.Kind != "" {
		what += " of kind " + cell(sel.Kind)
	}
	if !sel.Before.IsZero() {
		what += " from before " + formatTime(sel.Before, now)
	}
	if *f.dryRun {
		fmt.Fprintf(s.stdout, "would %s %d %s (dry run: nothing changed)\n", b.doing, doc.Matched, what)
		return nil
	}
	fmt.Fprintf(s.stdout, "%s %d %s", b.done, doc.Changed, what)
	if moved := doc.Matched - doc.Changed; moved > 0 {
		fmt.Fprintf(s.stdout, "; %d more matched but had moved on", moved)
	}
	fmt.Fprintln(s.stdout)
	return nil
}

// stateNames are the names of states.
func stateNames(states []cluster.State) []string {
	names := make([]string, len(states))
	for i, st := range states {
		names[i] = string(st)
	}
	return names
}

// orList is names as a list read out: "dead", "dead or done", "pending,
// running, dead or done".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
