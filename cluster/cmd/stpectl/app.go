package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// The command line: global flags, then a command with its own flags and
// arguments; the exit status says how it went.

// Exit statuses.
const (
	exitOK     = 0 // the command did what it was asked
	exitFailed = 1 // the operation failed or was refused (not found, wrong state, the store)
	exitUsage  = 2 // bad usage: unknown command, bad flag, malformed time or cursor
)

// runFunc does a command's work once its flags and arguments are parsed.
type runFunc func(ctx context.Context, s *session, args []string) error

// command is one subcommand.
type command struct {
	name     string
	synopsis string   // the flags that follow the name in the usage line (the arguments follow them)
	summary  string   // one line for the command list
	args     []string // names of its positional arguments, all required
	// anyPrefix lets the command run on a prefix with no keyspace
	// (migrate, whose keyspace an earlier version wrote without a
	// layout record); every other command refuses one.
	anyPrefix bool
	// storeOnly is set for a command that works on the store itself
	// (migrate), not through a node: none is made.
	storeOnly bool
	// bulk, if set, lets the command act on a selection (-all) instead
	// of its one argument.
	bulk *bulkAction
	// define registers the command's own flags on fs and returns the
	// function that runs it with their values.
	define func(fs *flag.FlagSet) runFunc
}

// commands lists every command, in the order help shows them.
func commands() []*command {
	return []*command{
		listCommand(), showCommand(), countsCommand(),
		runCommand(), retryCommand(), rescheduleCommand(), cancelCommand(), deleteCommand(), purgeCommand(),
		pauseCommand(), resumeCommand(),
		nodesCommand(), periodicCommand(), healthCommand(),
		migrateCommand(),
	}
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run runs stpectl with args (without the program name) and returns its exit
// status. getenv reads the environment (the default store's address).
func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	// Nothing stpectl writes to stderr (its errors, the node's log lines)
	// may show a password of Redis or PostgreSQL, whatever its source.
	stderr = redisconn.RedactingWriter(stderr)
	var g globals
	top := flag.NewFlagSet("stpectl", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	g.register(top, getenv)
	err := top.Parse(args)
	g.noteGiven(top)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			mainUsage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "stpectl: %v\n\n", err)
		mainUsage(stderr)
		return exitUsage
	}
	rest := top.Args()
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "stpectl: no command")
		fmt.Fprintln(stderr)
		mainUsage(stderr)
		return exitUsage
	}
	name := rest[0]
	if name == "help" {
		return help(rest[1:], stdout, stderr)
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "stpectl: unknown command %q\n\n", name)
		mainUsage(stderr)
		return exitUsage
	}
	fs := flag.NewFlagSet("stpectl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runCmd := cmd.define(fs)
	g.register(fs, nil)
	pos, err := parseInterleaved(fs, rest[1:])
	g.noteGiven(fs)
	if errors.Is(err, flag.ErrHelp) {
		commandUsage(stdout, cmd, fs)
		return exitOK
	}
	switch {
	case err != nil:
	case cmd.bulk != nil && fs.Lookup("all").Value.String() == "true":
		if len(pos) != 0 {
			err = usagef("%s: -all takes no argument, got %d", name, len(pos))
		}
	case len(pos) != len(cmd.args) && cmd.bulk != nil:
		err = usagef("%s: want %d argument(s) (%s) or -all, got %d", name, len(cmd.args), strings.Join(cmd.args, " "), len(pos))
	case len(pos) != len(cmd.args):
		err = usagef("%s: want %d argument(s) (%s), got %d", name, len(cmd.args), strings.Join(cmd.args, " "), len(pos))
	}
	if err == nil {
		err = g.check()
	}
	if err != nil {
		if !strings.HasPrefix(err.Error(), "stpectl: ") {
			err = usagef("%s: %v", name, err)
		}
		return fail(stdout, stderr, g.json, err, cmd, fs, failure{})
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	// What failed: the command and what it acts on (its ID or KIND).
	what := name
	switch {
	case len(pos) > 0:
		what += " " + pos[0]
	case cmd.bulk != nil && fs.Lookup("all").Value.String() == "true":
		what += " -all"
	}
	where := failure{what: what, store: g.storeName(), addr: g.storeAddr(), timeout: g.timeout}
	s, err := g.open(ctx, stdout, stderr, cmd)
	if err != nil {
		where.timedOut = ctx.Err() != nil
		return fail(stdout, stderr, g.json, err, cmd, fs, where)
	}
	defer s.close()
	where.addr, where.named = s.addr, s.store.named()
	if err := runCmd(ctx, s, pos); err != nil {
		where.timedOut = ctx.Err() != nil
		return fail(stdout, stderr, g.json, err, cmd, fs, where)
	}
	return exitOK
}

// fail reports err, in the one voice of failure.message, and returns its
// exit status: 2 with the command's usage for bad usage (the command
// line's, or input the cluster module refused as invalid, such as a
// malformed cursor), 1 otherwise. With -json it also writes the error
// document to stdout.
func fail(stdout, stderr io.Writer, asJSON bool, err error, cmd *command, fs *flag.FlagSet, where failure) int {
	code, reason := exitStatus(err)
	msg := where.message(err)
	fmt.Fprintln(stderr, msg)
	if code == exitUsage {
		fmt.Fprintln(stderr)
		commandUsage(stderr, cmd, fs)
	}
	var u *unhealthy
	if asJSON && !errors.As(err, &u) { // health wrote its own report
		writeJSON(stdout, errorJSON{Error: msg, Reason: reason})
	}
	return code
}

// parseInterleaved parses fs's flags wherever they stand among the
// positional arguments (the flag package stops at the first argument), and
// returns the arguments. After "--" everything is an argument, so an ID
// that starts with "-" goes after "--".
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
