package main

import (
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// Claiming in batches, the cut the lateness runs point at (-store-claims
// due): a node whose timer fires claims every task of its partitions due
// by then in one statement (Store.ClaimDue, as River's producer fetches
// its jobs), and completes each; the node's own path claims one task per
// statement (claim in storelateness.go).

// dueBatch is the most tasks one batch claim takes.
const dueBatch = 500

// fire is a timer's firing in batch mode: it asks the claimer for a
// round, and lets a later window load arm the task again if it is still
// pending then.
func (n *windowNode) fire(id string) {
	n.mu.Lock()
	delete(n.armed, id)
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default: // a round is asked for already
	}
}

// claimDueLoop claims in batches on each kick until the node's context
// ends: rounds until one takes fewer than dueBatch, and, if a round
// takes none, a few more a millisecond apart (the database's clock may
// be a hair behind the node's).
func (n *windowNode) claimDueLoop(completions *sync.WaitGroup) {
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.kick:
		}
		for empty := 0; empty < 5 && n.ctx.Err() == nil; {
			tok := newToken()
			started := time.Now()
			claims, err := n.store.ClaimDue(n.ctx, pgdriver.ClaimDueParams{Partitions: n.parts, Token: tok, Lease: benchLease, Limit: dueBatch})
			if err != nil {
				n.fail(err)
				break
			}
			for _, c := range claims {
				n.l.add(time.Since(c.Task.Due))
				n.fired.add(started.Sub(c.Task.Due))
				n.rtt.add(time.Since(started))
				completions.Add(1)
				go func() {
					defer completions.Done()
					if _, err := n.store.Complete(n.ctx, c.Task.ID, tok, pgdriver.Ending{}); err != nil {
						n.fail(err)
					}
				}()
			}
			if len(claims) == dueBatch {
				continue
			}
			if len(claims) > 0 {
				break
			}
			empty++
			time.Sleep(time.Millisecond)
		}
	}
}

// fail records err unless the run is over.
func (n *windowNode) fail(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctx.Err() == nil {
		n.errs = append(n.errs, err)
	}
}
