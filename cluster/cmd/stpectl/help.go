package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Usage messages: the whole tool's (stpectl help, stpectl -h) and each
// command's (stpectl help CMD, stpectl CMD -h).

// mainUsage writes the tool's usage to w.
func mainUsage(w io.Writer) {
	fmt.Fprint(w, `stpectl inspects and acts on the durable tasks of a cluster of scheduler
nodes (github.com/go-stpe/scheduler/cluster) in Redis or PostgreSQL.

Usage:
  stpectl [global flags] COMMAND [flags] [arguments]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-19s %s\n", strings.TrimSpace(c.name+" "+strings.Join(c.args, " ")), c.summary)
	}
	fmt.Fprint(w, `
Global flags (before or after the command):
`)
	var g globals
	fs := flag.NewFlagSet("stpectl", flag.ContinueOnError)
	g.register(fs, func(string) string { return "" })
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Environment: STPE_REDIS_URL (then REDIS_URL) is the default -redis,
STPE_REDIS_CLUSTER=1 the default -cluster, STPE_REDIS_SENTINEL_MASTER the
default -sentinel-master; STPE_REDIS_USERNAME and STPE_REDIS_PASSWORD
authenticate when the address carries no credentials. STPE_POSTGRES_URL is
the default -postgres; PGPASSWORD (or ~/.pgpass) authenticates when the
URL carries no password. No output shows a password.

The store: PostgreSQL when -postgres is given, or STPE_POSTGRES_URL is set
and no -redis, -cluster or -sentinel-master is; Redis otherwise. -prefix,
-cluster, -sentinel-master and migrate's -partitions and -force are
Redis's: given with PostgreSQL, they are refused.

Exit status: 0 success, 1 the operation failed or was refused (no such
task, wrong state, no keyspace, the store unreachable), 2 bad usage.

Run "stpectl help COMMAND" for a command's flags.
`)
}

// commandUsage writes cmd's usage, with the flags of fs, to w.
func commandUsage(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: stpectl %s\n\n%s.\n", usageLine(cmd), cmd.summary)
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !globalFlags[f.Name] {
			own.Var(f.Value, f.Name, f.Usage)
			own.Lookup(f.Name).DefValue = f.DefValue // not the value parsed
		}
	})
	n := 0
	own.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		own.SetOutput(w)
		own.PrintDefaults()
	}
	fmt.Fprintln(w, "\nGlobal flags: -redis, -cluster, -sentinel-master, -postgres, -prefix, -json, -timeout (see stpectl help).")
}

// usageLine is the command's name, its flags' synopsis and the names of
// its arguments: "show [-full] ID".
func usageLine(cmd *command) string {
	line := cmd.name + " " + cmd.synopsis
	for _, arg := range cmd.args {
		if !slices.Contains(strings.Fields(cmd.synopsis), arg) { // a bulk synopsis names its ID
			line += " " + arg
		}
	}
	return strings.Join(strings.Fields(line), " ")
}

// help serves "stpectl help [COMMAND]".
func help(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		mainUsage(stdout)
		return exitOK
	case 1:
		cmd := lookup(args[0])
		if cmd == nil {
			fmt.Fprintf(stderr, "stpectl: help: unknown command %q\n\n", args[0])
			mainUsage(stderr)
			return exitUsage
		}
		var g globals
		fs := flag.NewFlagSet("stpectl "+cmd.name, flag.ContinueOnError)
		cmd.define(fs)
		g.register(fs, func(string) string { return "" })
		commandUsage(stdout, cmd, fs)
		return exitOK
	default:
		fmt.Fprintln(stderr, "stpectl: help: want at most one command")
		return exitUsage
	}
}
