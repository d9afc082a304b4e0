package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The claim: one script moves a due task from pending to leased for one
// owner, so only one node can win it. It checks the due time against
// Redis's clock, so a node whose clock runs ahead is told to wait, and
// never starts a task before its due time by Redis's clock.

// claimOutcome is what a claim found.
type claimOutcome int

const (
	claimGone    claimOutcome = iota // not pending: claimed elsewhere, canceled or done
	claimWon                         // claimed: this node holds the lease
	claimLater                       // pending, but due later than the node expected
	claimEarly                       // pending for the expected time, not yet due by Redis's clock
	claimSkipped                     // a periodic occurrence the misfire policy skipped (misfire.go)
	claimBlocked                     // a periodic occurrence that waits for another one (misfire.go)
)

// claimResult is what a claim returned: for claimWon the task, for
// claimLater and claimEarly its kind and the time it is due (and, for
// claimEarly, Redis's time then).
type claimResult struct {
	outcome  claimOutcome
	kind     string
	payload  []byte
	due      int64         // µs: the task's due time (claimWon), or when it is pending for
	redisNow int64         // µs: Redis's clock at the claim (claimEarly, claimBlocked)
	wait     time.Duration // how long a blocked occurrence waits before it is claimed again (claimBlocked)
	attempt  int           // failed runs so far
	lost     int           // runs lost to faults so far
	meta     string        // the observer's metadata stored with the task (claimWon)
}

// claim claims task id of kind (as the window knows it) pending for due.
func (s store) claim(ctx context.Context, id, kind string, due int64, lease time.Duration, token string) (claimResult, error) {
	return s.runClaim(ctx, redisdriver.ClaimScript, id, kind, due, lease, token)
}

// runClaim runs sc, redisdriver.ClaimScript or one that runs its body last, with the
// claim's arguments followed by more, and reads its reply.
func (s store) runClaim(ctx context.Context, sc *redis.Script, id, kind string, due int64, lease time.Duration, token string, more ...any) (claimResult, error) {
	p := s.partOf(id)
	vals, err := withKind(kind, func(kind string) ([]any, error) {
		args := append([]any{id, strconv.FormatInt(due, 10), lease.Microseconds(), token, p.Channel()}, more...)
		return sc.Run(ctx, s.rdb, p.TaskKeys(kind, id), args...).Slice()
	})
	if err != nil {
		return claimResult{}, err
	}
	str := func(i int) string {
		if i >= len(vals) {
			return ""
		}
		v, _ := vals[i].(string)
		return v
	}
	code, _ := vals[0].(int64)
	switch code {
	case 1:
		r := claimResult{outcome: claimWon, kind: str(1), payload: []byte(str(2)), meta: str(6)}
		if r.due, err = parseMicros(str(3)); err != nil {
			return claimResult{}, err
		}
		r.attempt, _ = strconv.Atoi(str(4))
		r.lost, _ = strconv.Atoi(str(5))
		return r, nil
	case 2, 3:
		r := claimResult{outcome: claimLater, kind: str(2)}
		if r.due, err = parseMicros(str(1)); err != nil {
			return claimResult{}, err
		}
		if code == 3 {
			r.outcome = claimEarly
			if r.redisNow, err = parseMicros(str(3)); err != nil {
				return claimResult{}, err
			}
		}
		return r, nil
	case 4:
		return claimResult{outcome: claimSkipped}, nil
	case 5:
		until, err := parseMicros(str(1))
		if err != nil {
			return claimResult{}, err
		}
		now, err := parseMicros(str(2))
		if err != nil {
			return claimResult{}, err
		}
		return claimResult{outcome: claimBlocked, wait: blockedWait(until, now, lease)}, nil
	}
	return claimResult{outcome: claimGone}, nil
}
