package redisdriver

import (
	"sync"
	"sync/atomic"
)

// The keys of a script on one task, made once per partition and kind. A
// node's claims and completions (and a producer's stores) name the same
// ten keys of a partition and kind over and over: built anew per call
// (Partition.TaskKeys), they were ten string concatenations and three
// slices, a fifth of every allocation on a task's way from its due time
// to its handler's start, and so a share of the garbage collector's work
// on the same CPUs. The driver keeps them per (partition, kind) and builds
// only the task's own two keys per call.

// maxKindKeys bounds the kept keys: kinds are an application's names, a
// few per keyspace; past this many (partition, kind) pairs, the keys of a
// new pair are built per call, as before.
const maxKindKeys = 4096

// kindKeys keeps, per (partition, kind), the partition's fixed keys
// followed by the kind's index keys (FixedKeys then KindKeys).
type kindKeys struct {
	m sync.Map     // kindOf -> *[10]string; safe for concurrent use
	n atomic.Int64 // entries in m
}

// kindOf names one partition's index keys of one kind.
type kindOf struct {
	part int
	kind string
}

// taskKeys is p.TaskKeys(kind, id) with the partition's and kind's ten
// keys kept from an earlier call, and room for the timeline key that
// timelineKeys appends. p must be one of d's partitions.
func (d *Driver) taskKeys(p Partition, kind, id string) []string {
	keys := make([]string, 12, 13)
	pk := kindOf{p.Index, kind}
	if v, ok := d.kindKeys.m.Load(pk); ok {
		copy(keys, v.(*[10]string)[:])
	} else {
		var ten [10]string
		copy(ten[:], p.FixedKeys())
		copy(ten[6:], p.KindKeys(kind))
		if d.kindKeys.n.Load() < maxKindKeys {
			if _, loaded := d.kindKeys.m.LoadOrStore(pk, &ten); !loaded {
				d.kindKeys.n.Add(1)
			}
		}
		copy(keys, ten[:])
	}
	keys[10], keys[11] = p.Task(id), p.Done(id)
	return keys
}
