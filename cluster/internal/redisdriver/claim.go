package redisdriver

import (
	"context"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// The claim: ClaimScript moves a due task from pending to running for one
// owner; PeriodicClaimScript decides the periodic rules first (misfire.lua).
// Both check the due time against Redis's clock.

// Claim claims task id with ClaimScript (driver.Claims).
func (d *Driver) Claim(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string) (driver.Claim, error) {
	return d.runClaim(ctx, ClaimScript, id, kind, due, lease, owner)
}

// ClaimOccurrence claims occurrence id with PeriodicClaimScript, given o's
// rules after the claim's arguments (driver.Claims).
func (d *Driver) ClaimOccurrence(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string, o driver.Occurrence) (driver.Claim, error) {
	overlap, next := "0", ""
	if o.Overlap {
		overlap = "1"
	}
	if !o.Next.IsZero() {
		next = strconv.FormatInt(o.Next.UnixMicro(), 10)
	}
	return d.runClaim(ctx, PeriodicClaimScript, id, kind, due, lease, owner,
		o.Misfire, overlap, next, o.Threshold.Microseconds(), o.Retention.Milliseconds(), o.Due.UnixMicro())
}

// runClaim runs sc, ClaimScript or one that runs its body last, with the
// claim's arguments followed by more, and reads its reply: a code, then
// for 1 (won) the kind, payload, due time, attempts, lost runs and
// metadata; for 2 (later) and 3 (early) the time pending for, the kind
// and (3) Redis's time; for 4 nothing (skipped); for 5 (blocked) the lease
// expiry waited for (0: an earlier occurrence) and Redis's time.
func (d *Driver) runClaim(ctx context.Context, sc *redis.Script, id, kind string, due time.Time, lease time.Duration, owner string, more ...any) (driver.Claim, error) {
	p := d.partOf(id)
	vals, err := withKind(kind, func(kind string) ([]any, error) {
		args := append([]any{id, strconv.FormatInt(due.UnixMicro(), 10), lease.Microseconds(), owner, p.Channel()}, more...)
		args = append(args, d.listening.hears(p.Channel()))
		return d.batches.run(ctx, d.rdb, sc, d.taskKeys(p, kind, id), args...).Slice()
	})
	if err != nil {
		return driver.Claim{}, err
	}
	str := func(i int) string {
		if i >= len(vals) {
			return ""
		}
		v, _ := vals[i].(string)
		return v
	}
	at := func(i int) (time.Time, error) {
		us, err := parseMicros(str(i))
		return time.UnixMicro(us), err
	}
	code, _ := vals[0].(int64)
	switch code {
	case 1:
		c := driver.Claim{Outcome: driver.ClaimWon, Kind: str(1), Payload: []byte(str(2)), Meta: str(6)}
		if c.Due, err = at(3); err != nil {
			return driver.Claim{}, err
		}
		c.Attempt, _ = strconv.Atoi(str(4))
		c.Lost, _ = strconv.Atoi(str(5))
		return c, nil
	case 2, 3:
		c := driver.Claim{Outcome: driver.ClaimLater, Kind: str(2)}
		if c.Due, err = at(1); err != nil {
			return driver.Claim{}, err
		}
		if code == 3 {
			c.Outcome = driver.ClaimEarly
			if c.StoreNow, err = at(3); err != nil {
				return driver.Claim{}, err
			}
		}
		return c, nil
	case 4:
		return driver.Claim{Outcome: driver.ClaimSkipped}, nil
	case 5:
		c := driver.Claim{Outcome: driver.ClaimBlocked}
		until, err := parseMicros(str(1))
		if err != nil {
			return driver.Claim{}, err
		}
		if until != 0 {
			c.BlockedUntil = time.UnixMicro(until)
		}
		if c.StoreNow, err = at(2); err != nil {
			return driver.Claim{}, err
		}
		return c, nil
	}
	return driver.Claim{Outcome: driver.ClaimGone}, nil
}
