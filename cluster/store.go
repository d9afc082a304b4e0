package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// store names the keys of one prefix and runs the scripts on them.
type store struct {
	rdb    redis.UniversalClient
	prefix string
}

func (s store) pending() string       { return s.prefix + ":pending" }
func (s store) lease() string         { return s.prefix + ":lease" }
func (s store) dead() string          { return s.prefix + ":dead" }
func (s store) nodes() string         { return s.prefix + ":nodes" }
func (s store) taskPrefix() string    { return s.prefix + ":t:" }
func (s store) task(id string) string { return s.taskPrefix() + id }
func (s store) done(id string) string { return s.prefix + ":done:" + id }

// channel is where every state change that makes a task pending is
// published, as "due kind id".
func (s store) channel() string { return s.prefix + ":events" }

// parseMicros converts the store's unit back; Redis may write a score as
// "1.7e+15" style only for non-integers, which the store never writes.
func parseMicros(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("cluster: bad time %q in the store: %w", s, err)
	}
	return int64(f), nil
}

// claimOutcome is what a claim found.
type claimOutcome int

const (
	claimGone  claimOutcome = iota // not pending: claimed elsewhere, canceled or done
	claimWon                       // claimed: this replica holds the lease
	claimLater                     // pending, but due later than expected
)

// claimed is a task this replica holds.
type claimed struct {
	kind    string
	payload []byte
	due     int64
	attempt int
}

func (s store) schedule(ctx context.Context, id, kind string, payload []byte, due int64, maxRetries int, fixed bool) (string, error) {
	f := "0"
	if fixed {
		f = "1"
	}
	return scheduleScript.Run(ctx, s.rdb, []string{s.pending(), s.task(id), s.done(id)},
		id, kind, payload, strconv.FormatInt(due, 10), maxRetries, f, s.channel()).Text()
}

// loaded is one pending task as the window sees it.
type loaded struct {
	id, kind string
	due      int64
}

func (s store) load(ctx context.Context, until int64, limit int) ([]loaded, error) {
	vals, err := loadScript.Run(ctx, s.rdb, []string{s.pending()},
		strconv.FormatInt(until, 10), limit, s.taskPrefix()).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make([]loaded, 0, len(vals)/3)
	for i := 0; i+2 < len(vals); i += 3 {
		due, err := parseMicros(vals[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, loaded{id: vals[i], due: due, kind: vals[i+2]})
	}
	return out, nil
}

func (s store) claim(ctx context.Context, id string, due int64, lease time.Duration, token string) (claimOutcome, claimed, error) {
	vals, err := claimScript.Run(ctx, s.rdb, []string{s.pending(), s.lease(), s.task(id)},
		id, strconv.FormatInt(due, 10), lease.Microseconds(), token, s.channel()).Slice()
	if err != nil {
		return claimGone, claimed{}, err
	}
	code, _ := vals[0].(int64)
	switch code {
	case 1:
		var c claimed
		c.kind, _ = vals[1].(string)
		p, _ := vals[2].(string)
		c.payload = []byte(p)
		d, _ := vals[3].(string)
		if c.due, err = parseMicros(d); err != nil {
			return claimGone, claimed{}, err
		}
		a, _ := vals[4].(string)
		c.attempt, _ = strconv.Atoi(a)
		return claimWon, c, nil
	case 2:
		d, _ := vals[1].(string)
		later, err := parseMicros(d)
		kind, _ := vals[2].(string)
		return claimLater, claimed{due: later, kind: kind}, err
	}
	return claimGone, claimed{}, nil
}

// extend renews the leases of held tasks (id, token pairs) and returns the
// IDs whose lease was lost.
func (s store) extend(ctx context.Context, lease time.Duration, held map[string]string) ([]string, error) {
	args := make([]any, 0, 2+2*len(held))
	args = append(args, lease.Microseconds(), s.taskPrefix())
	for id, tok := range held {
		args = append(args, id, tok)
	}
	lost, err := extendScript.Run(ctx, s.rdb, []string{s.lease()}, args...).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return lost, err
}

func (s store) complete(ctx context.Context, id, token string, retention time.Duration) (bool, error) {
	n, err := completeScript.Run(ctx, s.rdb, []string{s.lease(), s.task(id), s.done(id)},
		id, token, retention.Milliseconds()).Int()
	return n == 1, err
}

func (s store) fail(ctx context.Context, id, token, msg string, retryDue int64) (string, error) {
	return failScript.Run(ctx, s.rdb, []string{s.lease(), s.pending(), s.dead(), s.task(id)},
		id, token, msg, strconv.FormatInt(retryDue, 10), s.channel()).Text()
}

func (s store) release(ctx context.Context, id, token string) (bool, error) {
	n, err := releaseScript.Run(ctx, s.rdb, []string{s.lease(), s.pending(), s.task(id)},
		id, token, s.channel()).Int()
	return n == 1, err
}

func (s store) reap(ctx context.Context, limit int) (int, error) {
	return reapScript.Run(ctx, s.rdb, []string{s.lease(), s.pending(), s.dead()},
		s.taskPrefix(), limit, s.channel()).Int()
}

func (s store) cancel(ctx context.Context, id string) (bool, error) {
	n, err := cancelScript.Run(ctx, s.rdb, []string{s.pending(), s.lease(), s.dead(), s.task(id)}, id).Int()
	return n == 1, err
}

// loadScripts puts every script in Redis's script cache, so that the first
// call of each is one round trip (EVALSHA) like every later one.
func (s store) loadScripts(ctx context.Context) error {
	for _, sc := range []*redis.Script{scheduleScript, loadScript, claimScript, extendScript,
		completeScript, failScript, releaseScript, reapScript, cancelScript, membersScript} {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}

// members renews name's membership for ttl and returns the live nodes;
// a zero ttl removes it.
func (s store) members(ctx context.Context, name string, ttl time.Duration) ([]string, error) {
	return membersScript.Run(ctx, s.rdb, []string{s.nodes()}, name, ttl.Microseconds()).StringSlice()
}
