package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// callHook is a go-redis hook that counts, per step (a script by its
// name, or a command), the calls a client sends, the keys they name, the
// bytes of the requests and of the replies (their RESP encoding), and the
// round trips: one per call sent alone, one per pipeline for every step
// it holds.
type callHook struct {
	names map[string]string // script SHA-1 -> name

	mu    sync.Mutex // guards steps
	steps map[string]*stepStats
}

// stepStats is what one step sent and received.
type stepStats struct {
	calls, keys, sent, received, roundTrips int64
}

func newCallHook(names map[string]string) *callHook {
	return &callHook{names: names, steps: map[string]*stepStats{}}
}

func (h *callHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *callHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.record([]redis.Cmder{cmd})
		return err
	}
}

func (h *callHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.record(cmds)
		return err
	}
}

// record counts cmds, sent in one round trip.
func (h *callHook) record(cmds []redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]bool{}
	for _, cmd := range cmds {
		step, keys := h.stepOf(cmd)
		s := h.steps[step]
		if s == nil {
			s = &stepStats{}
			h.steps[step] = s
		}
		s.calls++
		s.keys += int64(keys)
		s.sent += respSize(cmd.Args())
		s.received += replySize(cmd)
		if !seen[step] {
			seen[step] = true
			s.roundTrips++
		}
	}
}

// stepOf names a command's step, and counts the keys it names (a
// script's numkeys; for other commands, the first argument).
func (h *callHook) stepOf(cmd redis.Cmder) (string, int) {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	switch name {
	case "evalsha", "eval":
		sha := fmt.Sprint(args[1])
		if name == "eval" {
			sha = redis.NewScript(sha).Hash()
		}
		keys := 0
		if len(args) > 2 {
			fmt.Sscan(fmt.Sprint(args[2]), &keys)
		}
		if n, ok := h.names[sha]; ok {
			return "script " + n, keys
		}
		return "script " + sha[:8], keys
	case "ping", "hello", "client", "info", "select", "command":
		return name, 0
	}
	if len(args) > 1 {
		return name, 1
	}
	return name, 0
}

// respSize is the size of args as a RESP request.
func respSize(args []any) int64 {
	n := int64(len(fmt.Sprintf("*%d\r\n", len(args))))
	for _, a := range args {
		var s int
		switch v := a.(type) {
		case string:
			s = len(v)
		case []byte:
			s = len(v)
		default:
			s = len(fmt.Sprint(v))
		}
		n += int64(len(fmt.Sprintf("$%d\r\n", s)) + s + 2)
	}
	return n
}

// replySize is the size of a command's reply in RESP, from its value.
func replySize(cmd redis.Cmder) int64 {
	if cmd.Err() != nil {
		return int64(len(cmd.Err().Error()) + 3)
	}
	switch c := cmd.(type) {
	case *redis.Cmd:
		return valueSize(c.Val())
	case *redis.StringCmd:
		return valueSize(c.Val())
	case *redis.IntCmd:
		return valueSize(c.Val())
	case *redis.BoolCmd:
		return 4
	case *redis.StatusCmd:
		return int64(len(c.Val()) + 3)
	case *redis.ZSliceCmd:
		n := int64(len(fmt.Sprintf("*%d\r\n", 2*len(c.Val()))))
		for _, z := range c.Val() {
			n += valueSize(z.Member) + valueSize(fmt.Sprint(z.Score))
		}
		return n
	case *redis.StringSliceCmd:
		return valueSize(toAny(c.Val()))
	case *redis.SliceCmd:
		return valueSize(c.Val())
	case *redis.IntSliceCmd:
		n := int64(len(fmt.Sprintf("*%d\r\n", len(c.Val()))))
		for _, v := range c.Val() {
			n += valueSize(v)
		}
		return n
	}
	return valueSize(fmt.Sprint(cmd))
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// valueSize is the RESP size of a reply value as go-redis decodes it.
func valueSize(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 5
	case string:
		return int64(len(fmt.Sprintf("$%d\r\n", len(x))) + len(x) + 2)
	case int64:
		return int64(len(fmt.Sprintf(":%d\r\n", x)))
	case []any:
		n := int64(len(fmt.Sprintf("*%d\r\n", len(x))))
		for _, e := range x {
			n += valueSize(e)
		}
		return n
	}
	return int64(len(fmt.Sprint(v)) + 3)
}

// snapshot copies the counts so far.
func (h *callHook) snapshot() map[string]stepStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]stepStats, len(h.steps))
	for k, v := range h.steps {
		out[k] = *v
	}
	return out
}

// countingConn counts the bytes a connection reads and writes: the
// subscriptions' messages, which no hook sees, are read this way.
type countingConn struct {
	net.Conn
	read, written *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}
