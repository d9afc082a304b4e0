package cluster

import "slices"

// Priority between kinds: which kind's ready task a free worker claims
// when tasks of several kinds are due and the workers are too few for all
// of them. With free workers every due task is claimed at once, whatever
// its priority. The rule, among the kinds below their WithKindConcurrency
// limit that have a ready task:
//
//   - no kind of the node has WithKindPriority: the task due first, of
//     whichever kind (due order, as without priorities);
//   - weighted (the default once a kind has a priority): kinds take the
//     free workers in proportion to their weights, a kind without
//     WithKindPriority weighing 1. The order is the smooth weighted round
//     robin (nginx's upstream balancing): deterministic, and over any run
//     of picks among the same kinds each kind's share is its weight over
//     the sum of theirs, within one pick. So weights 3 and 1 give the
//     picks a, a, b, a, then again, while both have tasks waiting.
//   - strict (WithStrictPriority): the kind of the highest weight first;
//     a lower one runs only while no higher one has a ready task (or all
//     of those are at their limit).
//
// Within a kind, tasks are claimed in due order. asynq's counterparts are
// Config.Queues (weights per queue, each poll drawing the queue order at
// random in proportion to them) and Config.StrictPriority; River has
// per-queue workers but no priority between queues (its job priority
// orders the jobs of one queue).

// WithKindPriority gives a kind a priority weight (default 1): when more
// tasks are due on this node than it has free workers, the kinds share the
// workers in proportion to their weights, or, with WithStrictPriority, the
// highest weight goes first (asynq's Config.Queues weights). A weight
// below 1 is an error wrapping scheduler.ErrInvalidArgument.
func WithKindPriority(weight int) KindOption {
	return KindOption{func(h *handleConfig) { h.weight, h.weightSet = weight, true }}
}

// WithStrictPriority makes a node serve the kinds strictly by priority
// (WithKindPriority) when its workers are scarce: a kind's ready tasks wait
// while a kind of a higher weight has one (asynq's
// Config.StrictPriority). Without it the kinds share the workers in
// proportion to their weights.
func WithStrictPriority() Option { return optionFunc(func(c *config) { c.strictPriority = true }) }

// weightLocked is kind's priority weight: 1 unless WithKindPriority gave
// another. n.mu must be held.
func (n *Node) weightLocked(kind string) int {
	if w := n.handlers[kind].weight; w > 0 {
		return w
	}
	return 1
}

// chooseKindLocked picks, among kinds (each with a ready task), the kind
// whose task a free worker claims next, by the priority rule above. n.mu
// must be held.
func (n *Node) chooseKindLocked(kinds []string) string {
	slices.Sort(kinds) // the rule's ties, and the round robin's order
	head := func(kind string) int64 { return (*n.ready[kind])[0].due }
	switch {
	case n.cfg.strictPriority:
		best := kinds[0]
		for _, k := range kinds[1:] {
			wk, wb := n.weightLocked(k), n.weightLocked(best)
			if wk > wb || wk == wb && head(k) < head(best) {
				best = k
			}
		}
		return best
	case n.weighted:
		best, total := "", 0
		for _, k := range kinds {
			w := n.weightLocked(k)
			n.credit[k] += w
			total += w
			if best == "" || n.credit[k] > n.credit[best] {
				best = k
			}
		}
		n.credit[best] -= total
		return best
	default:
		best := kinds[0]
		for _, k := range kinds[1:] {
			if head(k) < head(best) {
				best = k
			}
		}
		return best
	}
}
