package redisdriver

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The bulk actions work in rounds: a round reads a batch of IDs from each
// partition that may hold more (bulkBatch at most, from the state's sorted
// set, or from the kind's index of that state when a kind is given), reads
// their kinds, then runs one script per partition on its batch, all of
// them pipelined, so no script holds Redis for long and a round costs
// three round trips whatever the number of partitions. Each script checks
// every task again, as the single action's script does.

// bulkBatch is how many tasks of a partition one round of a bulk action
// reads and one script changes.
const bulkBatch = 500

// bulkIDChunk is how many of the IDs of a selection by IDs one round
// reads and changes.
const bulkIDChunk = 4096

// errBulkReply is the cause of the error of a bulk script whose reply is
// not what it writes.
var errBulkReply = errors.New("bad reply from a bulk script")

// bulkOps are BulkScript's names of the actions it does.
var bulkOps = map[driver.BulkAction]string{driver.BulkRetry: "retry", driver.BulkDelete: "delete", driver.BulkRunNow: "runnow"}

// CountSelected counts a selection by IDs a chunk at a time (their kinds,
// then their scores: two round trips a chunk), any other in one round
// trip of a ZCOUNT per sorted set it reads.
func (d *Driver) CountSelected(ctx context.Context, sel driver.Selection) (int, error) {
	if len(sel.IDs) > 0 {
		total := 0
		for _, chunk := range chunks(dedupe(sel.IDs), bulkIDChunk) {
			picked, err := d.pickIDs(ctx, sel, chunk)
			if err != nil {
				return total, err
			}
			total += len(picked.kinds)
		}
		return total, nil
	}
	return d.countScan(ctx, sel)
}

// Bulk applies r.Action by IDs (a chunk of IDs at a time) or by scanning
// the selection's sorted sets.
func (d *Driver) Bulk(ctx context.Context, r driver.BulkRequest) (driver.BulkResult, error) {
	if r.Action != driver.BulkCancel && bulkOps[r.Action] == "" {
		return driver.BulkResult{}, fmt.Errorf("unknown bulk action %d", r.Action)
	}
	if len(r.Selection.IDs) > 0 {
		return d.bulkIDs(ctx, r)
	}
	return d.bulkScan(ctx, r)
}

// bulkIDs applies r to the tasks of its IDs that match its selection, a
// chunk of IDs at a time: read their kinds and scores, then change the
// matching ones.
func (d *Driver) bulkIDs(ctx context.Context, r driver.BulkRequest) (driver.BulkResult, error) {
	var res driver.BulkResult
	for _, chunk := range chunks(dedupe(r.Selection.IDs), bulkIDChunk) {
		picked, err := d.pickIDs(ctx, r.Selection, chunk)
		if err != nil {
			return res, err
		}
		res.Matched += len(picked.kinds)
		out, err := d.apply(ctx, r, picked.byPart, picked.kinds)
		for _, o := range out {
			res.Changed += o.changed
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// bulkScan applies r to the tasks its selection picks by state, kind and
// time, in rounds over the partitions that may hold more.
func (d *Driver) bulkScan(ctx context.Context, r driver.BulkRequest) (driver.BulkResult, error) {
	var res driver.BulkResult
	sc, err := d.newScan(ctx, r.Selection)
	if err != nil {
		return res, err
	}
	runNow := r.Action == driver.BulkRunNow
	if runNow {
		// Only the tasks not due yet: those after Redis's time, as the
		// caller reckons it; each partition's script then answers its own.
		from := "(" + strconv.FormatInt(r.Now.UnixMicro(), 10)
		for i := range sc.from {
			sc.from[i] = from
		}
	}
	parts := d.parts
	// A partition is read again while its last read filled a batch and
	// some of what it read left the selection, or found tasks whose kind
	// it must read again; one whose batch all stayed (their sets disagree)
	// is left rather than read forever. What it reads again is matched
	// once.
	stalls := map[int]int{} // rounds in a row a partition found kinds to read again
	for len(parts) > 0 {
		batch, err := sc.read(ctx, parts)
		if err != nil {
			return res, err
		}
		kinds, err := d.kindsOf(ctx, batch.byPart)
		if err != nil {
			return res, err
		}
		for _, kind := range kinds {
			if kind != "" {
				res.Matched++
			}
		}
		out, err := d.apply(ctx, r, batch.byPart, kinds)
		for _, o := range out {
			res.Changed += o.changed
		}
		if err != nil {
			return res, err
		}
		var more []Partition
		for pi, o := range out {
			if runNow && o.now != "" {
				sc.from[pi] = "(" + o.now
			}
			if o.skipped > 0 {
				stalls[pi]++
			} else {
				stalls[pi] = 0
			}
			left := o.given > o.kept+o.skipped
			if batch.full[pi] && left || o.skipped > 0 && stalls[pi] < 3 {
				res.Matched -= o.kept + o.skipped
				more = append(more, d.parts[pi])
			}
		}
		parts = more
	}
	return res, nil
}

// partOutcome is what a round of a bulk action did in one partition: of
// the tasks it was given, how many it changed, how many it left because
// their kind is not the one read (read again next round), how many
// entries left without their task it dropped, how many it left though
// they are still selected (a next read finds them again), and Redis's
// time in the script (µs).
type partOutcome struct {
	given, changed, skipped, strays, kept int
	now                                   string
}

// apply runs r's action on the tasks of byPart (by partition index), of
// the kinds given, and returns what it did in each partition.
func (d *Driver) apply(ctx context.Context, r driver.BulkRequest, byPart map[int][]string, kinds map[string]string) (map[int]partOutcome, error) {
	if r.Action == driver.BulkCancel {
		return d.cancelEach(ctx, r, byPart, kinds)
	}
	return d.runBulk(ctx, bulkOps[r.Action], r.Selection, byPart, kinds)
}

// dedupe is ids without repeats, in their first order.
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// chunks splits ids into slices of at most size.
func chunks(ids []string, size int) [][]string {
	var out [][]string
	for len(ids) > size {
		out = append(out, ids[:size])
		ids = ids[size:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}
