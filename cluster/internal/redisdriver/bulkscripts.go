package redisdriver

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The scripts of the bulk actions: BulkScript changes a batch of one
// partition's tasks for RetryAll, DeleteAll and RunNowAll, checking each
// as the single action's script does; CancelAll runs Cancel's script on
// each task, after a check of its state (BulkCancelScript).

// runBulk runs BulkScript for op on the tasks of byPart (by partition
// index), of the kinds given, at most bulkBatch per script, every script
// in one pipeline.
func (d *Driver) runBulk(ctx context.Context, op string, sel driver.Selection, byPart map[int][]string, kinds map[string]string) (map[int]partOutcome, error) {
	before := beforeArg(sel)
	var calls []scriptCall
	var owner []int // the partition of each call
	for pi, ids := range byPart {
		p := d.parts[pi]
		for _, batch := range chunks(ids, bulkBatch) {
			c := scriptCall{keys: p.FixedKeys(), args: []any{op, string(sel.State), sel.Kind, before, p.Channel()}}
			for _, id := range batch {
				c.keys = append(append(c.keys, p.Task(id)), p.KindKeys(kindOr(kinds[id], sel.Kind))...)
				c.args = append(c.args, id)
			}
			calls = append(calls, c)
			owner = append(owner, pi)
		}
	}
	cmds, err := evalEach(ctx, d.rdb, BulkScript, calls)
	if err != nil {
		return nil, err
	}
	out := make(map[int]partOutcome, len(byPart))
	var firstErr error
	for i, c := range cmds {
		vals, err := c.Slice()
		if err == nil && len(vals) < 5 {
			err = fmt.Errorf("%w: %d values", errBulkReply, len(vals))
		}
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		o := out[owner[i]]
		o.changed += intOf(vals[0])
		o.skipped += intOf(vals[1])
		o.strays += intOf(vals[2])
		o.now, _ = vals[3].(string)
		o.kept += intOf(vals[4])
		o.given += len(calls[i].args) - 5
		out[owner[i]] = o
	}
	return out, firstErr
}

// beforeArg is sel.Before as the bulk scripts take it: µs, or "" for
// none.
func beforeArg(sel driver.Selection) string {
	if sel.Before.IsZero() {
		return ""
	}
	return strconv.FormatInt(sel.Before.UnixMicro(), 10)
}

// kindOr is kind, or fallback for a task whose kind could not be read
// (gone, or an entry left without its task).
func kindOr(kind, fallback string) string {
	if kind == "" {
		return fallback
	}
	return kind
}

// intOf reads an integer of a script's reply; anything else is 0.
func intOf(v any) int {
	i, _ := v.(int64)
	return int(i)
}

// cancelEach runs BulkCancelScript on each task of byPart (by partition
// index), of the kinds given, in one pipeline, and tells r.Canceled of the
// removed ones.
func (d *Driver) cancelEach(ctx context.Context, r driver.BulkRequest, byPart map[int][]string, kinds map[string]string) (map[int]partOutcome, error) {
	sel := r.Selection
	before := beforeArg(sel)
	keep := keepArgs(r.Keep)
	var calls []scriptCall
	var ids []string
	var owner []int
	for pi, list := range byPart {
		p := d.parts[pi]
		for _, id := range list {
			args := append([]any{id, r.Retention.Milliseconds(), p.Channel()}, keep...)
			args = append(args, string(sel.State), before, sel.Kind)
			calls = append(calls, scriptCall{keys: p.TaskKeys(kindOr(kinds[id], sel.Kind), id), args: args})
			ids = append(ids, id)
			owner = append(owner, pi)
		}
	}
	cmds, err := evalEach(ctx, d.rdb, BulkCancelScript, calls)
	if err != nil {
		return nil, err
	}
	out := make(map[int]partOutcome, len(byPart))
	var firstErr error
	for i, c := range cmds {
		o := out[owner[i]]
		vals, err := c.Int64Slice()
		switch {
		case err != nil:
			if _, ok := kindError(err); ok {
				// the ID names a new task of another kind: not the one read
				o.skipped++
			} else {
				firstErr = cmp.Or(firstErr, err)
			}
		case len(vals) >= 1 && vals[0] == 1:
			o.changed++
			if r.Canceled != nil {
				r.Canceled(ids[i])
			}
		case len(vals) >= 4:
			o.strays += int(vals[2])
			o.kept += int(vals[3])
		}
		o.given++
		out[owner[i]] = o
	}
	return out, firstErr
}
