package redisdriver

import (
	"strconv"
	"strings"
)

// Every key the store writes is named here, and nowhere else: the Lua
// scripts are given every key they touch (as Redis Cluster requires), and
// read the names they derive (a kind's index, a task's hash) from the
// same shapes.
//
// The tasks of a prefix are spread over partitions, each under a hash tag
// of its own, so that a Redis Cluster spreads them over its shards; a
// task's keys are its partition's. The cluster-wide records (nodes,
// member records, periodic declarations, the layout) stay under the
// prefix itself, in its one slot.

// LayoutVersion is the layout this version writes and reads: tasks in
// partitions, cluster-wide records under the prefix. It is recorded in
// the layout record (Keys.Layout) by the first node of a keyspace.
const LayoutVersion = "2"

// ClusterSlots is the number of Redis Cluster hash slots.
const ClusterSlots = 16384

// Keys names the cluster-wide keys of a prefix.
type Keys struct{ Prefix string }

// Nodes is the sorted set of the live claimers, scored by membership
// expiry.
func (k Keys) Nodes() string { return k.Prefix + ":nodes" }

// NodeKinds is the hash of the kinds each live node handles.
func (k Keys) NodeKinds() string { return k.Prefix + ":nodekinds" }

// Layout is the layout record: a hash of the layout's version and number
// of partitions.
func (k Keys) Layout() string { return k.Prefix + ":layout" }

// LayoutKey is the layout record's key of prefix, as an operator's
// message names it.
func LayoutKey(prefix string) string { return Keys{Prefix: prefix}.Layout() }

// MemberPrefix is the prefix of the member records (a hash per node).
func (k Keys) MemberPrefix() string { return k.Prefix + ":member:" }

// Members is the sorted set of the member records' names.
func (k Keys) Members() string { return k.Prefix + ":members" }

// PeriodicPrefix is the prefix of the periodic declarations (a hash per
// periodic task).
func (k Keys) PeriodicPrefix() string { return k.Prefix + ":periodic:" }

// Periodic is the sorted set of the periodic declarations' names.
func (k Keys) Periodic() string { return k.Prefix + ":periodic" }

// MembershipChannel is the pub/sub channel of membership changes and
// ended periodic tasks.
func (k Keys) MembershipChannel() string { return k.Prefix + ":membership" }

// Partition is one partition of a prefix: the key prefix, with its own
// hash tag, of every key of its tasks.
type Partition struct {
	Index  int
	Prefix string
}

// Keys of a partition: the same shapes as a prefix's keys in the
// single-slot layout (OldLayout), under the partition's own tag.

func (p Partition) Pending() string       { return p.Prefix + ":pending" }
func (p Partition) Lease() string         { return p.Prefix + ":lease" }
func (p Partition) Dead() string          { return p.Prefix + ":dead" }
func (p Partition) DoneSet() string       { return p.Prefix + ":done" }
func (p Partition) Kinds() string         { return p.Prefix + ":kinds" }
func (p Partition) Paused() string        { return p.Prefix + ":paused" }
func (p Partition) TaskPrefix() string    { return p.Prefix + ":t:" }
func (p Partition) Task(id string) string { return p.Prefix + ":t:" + id }
func (p Partition) Done(id string) string { return p.Prefix + ":done:" + id }

// Channel is the partition's pub/sub channel: a node subscribes to the
// channels of the partitions it owns or backs up.
func (p Partition) Channel() string { return p.Prefix + ":events" }

// KindIndex is the sorted set of the partition's tasks of kind in state
// ("pending", "running", "dead" or "done"), scored as the state's own set
// (StateSet).
func (p Partition) KindIndex(state, kind string) string {
	return p.Prefix + ":k:" + state + ":" + kind
}

// StateSet is the sorted set of the partition's tasks in state. The
// pending set holds only the tasks that may be claimed: those of a paused
// kind wait in their kind's index alone.
func (p Partition) StateSet(state string) string {
	switch state {
	case "running":
		return p.Lease()
	case "done":
		return p.DoneSet()
	}
	return p.Prefix + ":" + state
}

// FixedKeys are the partition's six keys every script that changes a
// task's state is given first, in the order lua/lib/part.lua reads them.
func (p Partition) FixedKeys() []string {
	return []string{p.Pending(), p.Lease(), p.Dead(), p.DoneSet(), p.Kinds(), p.Paused()}
}

// KindKeys are the four index keys of kind (pending, running, dead,
// done), in the order lua/lib/part.lua reads them.
func (p Partition) KindKeys(kind string) []string {
	return []string{p.KindIndex("pending", kind), p.KindIndex("running", kind),
		p.KindIndex("dead", kind), p.KindIndex("done", kind)}
}

// TaskKeys are the twelve keys of a script on one task: the fixed keys,
// the indexes of the task's kind as the caller believes it to be (a
// script that finds another kind answers "KIND <kind>"), the task's hash
// and its done marker.
func (p Partition) TaskKeys(kind, id string) []string {
	keys := make([]string, 0, 12)
	keys = append(keys, p.FixedKeys()...)
	keys = append(keys, p.KindKeys(kind)...)
	return append(keys, p.Task(id), p.Done(id))
}

// Timeline is the hash of the partition's runs and depth in minute
// (minutes since the Unix epoch).
func (p Partition) Timeline(minute int64) string {
	return p.Prefix + ":tl:" + strconv.FormatInt(minute, 10)
}

// PeriodicCursor is the cursor (the last stored occurrence) of periodic
// task name, kept in the partition of its occurrences.
func (p Partition) PeriodicCursor(name string) string {
	return p.Prefix + ":periodic:" + name
}

// PartitionsOf makes the n partitions of prefix. If the prefix holds a
// hash tag ({...}), each partition's tag is that tag's text followed by
// "/i.j"; otherwise the prefix is followed by ":{i.j}". j is the smallest
// number that puts the tag's slot in the i-th of n equal slot ranges, so
// that P partitions land about P/M on each of M masters, whatever M is (a
// Redis Cluster gives each master a contiguous range of slots).
func PartitionsOf(prefix string, n int) []Partition {
	before, tag, after := SplitHashTag(prefix)
	parts := make([]Partition, n)
	for i := range parts {
		lo, hi := i*ClusterSlots/n, (i+1)*ClusterSlots/n
		for j := 0; ; j++ {
			t := strconv.Itoa(i) + "." + strconv.Itoa(j)
			if tag != "" {
				t = tag + "/" + t
			}
			if s := int(KeySlot(t)); s >= lo && s < hi {
				if tag != "" {
					parts[i] = Partition{Index: i, Prefix: before + "{" + t + "}" + after}
				} else {
					parts[i] = Partition{Index: i, Prefix: prefix + ":{" + t + "}"}
				}
				break
			}
		}
	}
	return parts
}

// SplitHashTag splits prefix around its Redis Cluster hash tag: the text
// between the first "{" and the first "}" after it, if not empty. tag is ""
// for a prefix without one.
func SplitHashTag(prefix string) (before, tag, after string) {
	open := strings.IndexByte(prefix, '{')
	if open < 0 {
		return prefix, "", ""
	}
	closing := strings.IndexByte(prefix[open+1:], '}')
	if closing <= 0 {
		return prefix, "", ""
	}
	return prefix[:open], prefix[open+1 : open+1+closing], prefix[open+1+closing+1:]
}

// KeySlot is the Redis Cluster slot of a hash tag's text: CRC16 (XMODEM)
// modulo 16,384.
func KeySlot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % ClusterSlots
}

// OldLayout names the keys of the single-slot layout of the versions
// before partitions, in which every task of a prefix lived under the
// prefix itself: the sorted sets prefix:pending, prefix:lease (running
// tasks, by lease expiry), prefix:dead and prefix:done, beside each one
// index per kind (prefix:k:<state>:<kind>, same scores), the set of kinds
// with tasks (prefix:kinds), the set of paused kinds (prefix:paused, whose
// pending tasks sit in their kind's pending index alone), the task hashes
// (prefix:t:<id>) and the done markers (prefix:done:<id>, kept for the
// retention). Only Migrate and the layout check read them.
type OldLayout struct{ Prefix string }

func (o OldLayout) StateSet(state string) string {
	if state == "running" {
		return o.Prefix + ":lease"
	}
	return o.Prefix + ":" + state
}

func (o OldLayout) KindIndex(state, kind string) string {
	return o.Prefix + ":k:" + state + ":" + kind
}

func (o OldLayout) Kinds() string         { return o.Prefix + ":kinds" }
func (o OldLayout) Paused() string        { return o.Prefix + ":paused" }
func (o OldLayout) TaskPrefix() string    { return o.Prefix + ":t:" }
func (o OldLayout) Task(id string) string { return o.TaskPrefix() + id }
func (o OldLayout) MarkPrefix() string    { return o.Prefix + ":done:" }
func (o OldLayout) Mark(id string) string { return o.MarkPrefix() + id }
func (o OldLayout) IndexPrefix() string   { return o.Prefix + ":k:" }
