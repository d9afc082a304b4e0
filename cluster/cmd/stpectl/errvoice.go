package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/jackc/pgx/v5/pgconn"
)

// The one voice of stpectl's errors: "stpectl: WHAT: WHY", WHAT being the
// command and its arguments ("retry 42", "counts"), WHY said once: the
// cluster module's refusal without its own "cluster: what:" ("no such
// task"), or, for the store failing, "redis ADDR: CAUSE" (or "postgres
// ADDR: CAUSE") with the address (redacted) and the cause without the
// layers that repeat it ("connect: connection refused", "i/o timeout
// ..."). Bad usage keeps its own message, which names the flag or
// argument.

// usageError is bad usage of the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError "stpectl: format".
func usagef(format string, args ...any) error {
	return &usageError{msg: "stpectl: " + fmt.Sprintf(format, args...)}
}

// refusal is an operation stpectl itself found impossible: exit status 1,
// wrapping the cluster module's sentinel for the same case. why is what
// follows the command in the message.
type refusal struct {
	why      string
	sentinel error
}

func (e *refusal) Error() string { return e.why }

func (e *refusal) Unwrap() error { return e.sentinel }

// refused returns a refusal whose why is format with args, wrapping
// sentinel.
func refused(sentinel error, format string, args ...any) error {
	return &refusal{why: fmt.Sprintf(format, args...), sentinel: sentinel}
}

// exitStatus is err's exit status and its JSON reason.
func exitStatus(err error) (code int, reason string) {
	var ue *usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, scheduler.ErrInvalidArgument):
		return exitUsage, "usage"
	case errors.Is(err, cluster.ErrNotFound):
		return exitFailed, "not_found"
	case errors.Is(err, cluster.ErrWrongState):
		return exitFailed, "wrong_state"
	case errors.Is(err, errNoKeyspace):
		return exitFailed, "no_keyspace"
	case errors.Is(err, cluster.ErrUnknownKind):
		return exitFailed, "unknown_kind"
	}
	return exitFailed, "failed"
}

// refusals are the cluster module's sentinels of an operation refused,
// as opposed to the store failing.
var refusals = []error{scheduler.ErrInvalidArgument, cluster.ErrNotFound, cluster.ErrWrongState,
	cluster.ErrLayout, cluster.ErrIDConflict, cluster.ErrUnknownKind}

// failure is where a command failed: what it was doing, on which store,
// within which -timeout.
type failure struct {
	what    string // the command and its arguments
	store   string // "redis" or "postgres"
	addr    string // the store's address, redacted
	named   string // how the node's errors name the store, if not "redis ADDR" (store.named)
	timeout time.Duration
	// timedOut is true when the command's -timeout passed.
	timedOut bool
}

// message is err said in stpectl's voice (see above), redacted.
func (f failure) message(err error) string {
	var ue *usageError
	var u *unhealthy
	var r *refusal
	var h *hinted
	msg := ""
	switch {
	case errors.As(err, &ue):
		msg = ue.msg
	case errors.As(err, &u):
		msg = u.Error()
	case errors.As(err, &h):
		msg = f.message(h.err) + " (" + h.hint + ")"
	case errors.As(err, &r):
		msg = "stpectl: " + f.what + ": " + r.why
	case isRefusal(err):
		msg = "stpectl: " + f.what + ": " + clusterWhy(err.Error())
	default:
		msg = "stpectl: " + f.what + ": " + f.storeFailure(err)
	}
	return redisconn.Redact(msg)
}

// isRefusal reports whether err is the cluster module refusing.
func isRefusal(err error) bool {
	for _, s := range refusals {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// clusterWhy is the cluster module's message without its "cluster: what: "
// layers, which the command's own what replaces, and without the
// "cluster: " of a sentinel wrapped inside, said once ("no such task: no
// such task" is "no such task").
func clusterWhy(s string) string {
	for {
		rest, ok := strings.CutPrefix(s, "cluster: ")
		if !ok {
			break
		}
		_, why, ok := strings.Cut(rest, ": ")
		if !ok {
			s = rest
			break
		}
		s = why
	}
	var parts []string
	for _, p := range strings.Split(strings.ReplaceAll(s, ": cluster: ", ": "), ": ") {
		if len(parts) == 0 || parts[len(parts)-1] != p {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}

// storeFailure says which store failed and how, "redis ADDR: CAUSE" or
// "postgres ADDR: CAUSE": the server's own address when the error names
// it (a cluster's master, the host a connection was refused by), else
// the one given.
func (f failure) storeFailure(err error) string {
	store := cmp.Or(f.store, "redis")
	addr := f.addr
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		addr = op.Addr.String()
	}
	cause := clusterWhy(err.Error())
	// A node on a driver names its store by the driver's Addr: said
	// once, as addr.
	if f.named != "" {
		cause = strings.TrimPrefix(cause, f.named+": ")
	}
	// The cluster module names the server it failed on, once: keep that,
	// said once.
	if rest, ok := strings.CutPrefix(cause, store+" "); ok {
		if a, why, ok := strings.Cut(rest, ": "); ok && !strings.ContainsAny(a, " \t") {
			if op == nil {
				addr = a
			}
			cause = why
		}
	}
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout(), pgconn.Timeout(err):
		cause = "i/o timeout"
	case op != nil:
		cause = op.Err.Error()
	case errors.As(err, &pe):
		// The server's own words, without pgx's layers, which name the
		// user.
		cause = pe.Error()
	default:
		cause = withoutConnectLayers(cause)
	}
	if f.timedOut {
		cause += fmt.Sprintf(" (no answer within -timeout %v)", f.timeout)
	}
	return store + " " + addr + ": " + cause
}

// connectLayers matches what pgx puts before the cause of a failed
// connection: "failed to connect to `user=U database=D`: HOST (NAME): ",
// which names the user and repeats the address.
var connectLayers = regexp.MustCompile("failed to connect to `[^`]*`:" + `\s*(\S+ \([^)]*\): )?`)

// withoutConnectLayers is cause without pgx's connection layers.
func withoutConnectLayers(cause string) string {
	return connectLayers.ReplaceAllString(cause, "")
}

// hinted is an error with advice for the operator, said after it.
type hinted struct {
	err  error
	hint string
}

func (e *hinted) Error() string { return e.err.Error() + " (" + e.hint + ")" }

func (e *hinted) Unwrap() error { return e.err }
