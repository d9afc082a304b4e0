package cluster

import (
	"strconv"
	"strings"
)

// Partitions: the tasks of a prefix are spread over P partitions, each
// under a hash tag of its own, so that a Redis Cluster spreads them over
// its shards (Temporal's history shards, Trigger.dev's hash sharding over
// several Redis instances; asynq and BullMQ keep each queue in one slot).
// A task's partition is a hash of its ID, so a fixed ID (WithID) always
// finds the same partition. Every script works on one partition and is
// given every key it touches, as Redis Cluster requires. The cluster-wide
// records (nodes, member records, periodic declarations, the layout) stay
// under the prefix itself, in its one slot.
//
// Partition i's tag is chosen so that its Redis Cluster slot falls in the
// i-th of P equal ranges of the 16,384 slots. A Redis Cluster gives each
// master a contiguous range of slots (redis-cli --cluster create splits
// them evenly, and resharding moves ranges), so P partitions at evenly
// spaced slots land about P/M on each of M masters, whatever M is.

// DefaultPartitions is the number of partitions of a prefix made without
// WithPartitions: 64, which splits evenly enough over up to about 16 Redis
// masters (each holds 4 partitions, ±1) and over as many nodes, while a
// node's sweep and the operations that read every partition (List, Counts,
// Pause) stay one pipelined round trip of 64 small commands. Raise it
// before the first task is stored when more masters or nodes are planned;
// it is fixed for the life of a keyspace.
const DefaultPartitions = 64

// MaxPartitions is the most partitions a prefix may have: with more, the
// slot ranges get narrower than 16 slots, and every sweep and operation
// reads more partitions than a pipeline carries comfortably.
const MaxPartitions = 1024

// clusterSlots is the number of Redis Cluster hash slots.
const clusterSlots = 16384

// WithPartitions sets the number of partitions the tasks of the prefix are
// spread over (default DefaultPartitions, at most MaxPartitions). Every
// node of a prefix must use the same number, for the life of the keyspace:
// the first node to start records it under prefix:layout, and a node with
// another number is refused at Start with ErrLayout. A number below 1 or
// above MaxPartitions is an error wrapping scheduler.ErrInvalidArgument
// at New.
func WithPartitions(n int) Option {
	return optionFunc(func(c *config) { c.partitions = n })
}

// partition is one partition of a prefix: the key prefix, with its own
// hash tag, of every key of its tasks.
type partition struct {
	index  int
	prefix string
}

// Keys of a partition: the same shapes as a prefix's keys in the single-slot
// layout, under the partition's own tag.

func (p partition) pending() string       { return p.prefix + ":pending" }
func (p partition) lease() string         { return p.prefix + ":lease" }
func (p partition) dead() string          { return p.prefix + ":dead" }
func (p partition) doneSet() string       { return p.prefix + ":done" }
func (p partition) kinds() string         { return p.prefix + ":kinds" }
func (p partition) paused() string        { return p.prefix + ":paused" }
func (p partition) taskPrefix() string    { return p.prefix + ":t:" }
func (p partition) task(id string) string { return p.taskPrefix() + id }
func (p partition) done(id string) string { return p.prefix + ":done:" + id }

// channel is the partition's pub/sub channel: a node subscribes to the
// channels of the partitions it owns or backs up.
func (p partition) channel() string { return p.prefix + ":events" }

// kindIndex is the sorted set of the partition's tasks of kind in state,
// scored as the state's own set (stateSet).
func (p partition) kindIndex(state State, kind string) string {
	return p.prefix + ":k:" + string(state) + ":" + kind
}

// stateSet is the sorted set of the partition's tasks in state. The
// pending set holds only the tasks that may be claimed: those of a paused
// kind wait in their kind's index alone (pause.go).
func (p partition) stateSet(state State) string {
	switch state {
	case Running:
		return p.lease()
	case Done:
		return p.doneSet()
	}
	return p.prefix + ":" + string(state)
}

// fixedKeys are the partition's six keys every script that changes a
// task's state is given first, in the order luaPart reads them.
func (p partition) fixedKeys() []string {
	return []string{p.pending(), p.lease(), p.dead(), p.doneSet(), p.kinds(), p.paused()}
}

// kindKeys are the four index keys of kind (pending, running, dead, done),
// in the order luaPart reads them.
func (p partition) kindKeys(kind string) []string {
	return []string{p.kindIndex(Pending, kind), p.kindIndex(Running, kind),
		p.kindIndex(Dead, kind), p.kindIndex(Done, kind)}
}

// taskKeys are the twelve keys of a script on one task: the fixed keys,
// the indexes of the task's kind as the caller believes it to be (a
// script that finds another kind answers "KIND <kind>", see withKind),
// the task's hash and its done marker.
func (p partition) taskKeys(kind, id string) []string {
	keys := make([]string, 0, 12)
	keys = append(keys, p.fixedKeys()...)
	keys = append(keys, p.kindKeys(kind)...)
	return append(keys, p.task(id), p.done(id))
}

// partitionsOf makes the n partitions of prefix. If the prefix holds a
// hash tag ({...}), each partition's tag is that tag's text followed by
// "/i.j"; otherwise the prefix is followed by ":{i.j}". j is the smallest
// number that puts the tag's slot in the i-th of n equal slot ranges.
func partitionsOf(prefix string, n int) []partition {
	before, tag, after := splitHashTag(prefix)
	parts := make([]partition, n)
	for i := range parts {
		lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n
		for j := 0; ; j++ {
			t := strconv.Itoa(i) + "." + strconv.Itoa(j)
			if tag != "" {
				t = tag + "/" + t
			}
			if s := int(keySlot(t)); s >= lo && s < hi {
				if tag != "" {
					parts[i] = partition{index: i, prefix: before + "{" + t + "}" + after}
				} else {
					parts[i] = partition{index: i, prefix: prefix + ":{" + t + "}"}
				}
				break
			}
		}
	}
	return parts
}

// splitHashTag splits prefix around its Redis Cluster hash tag: the text
// between the first "{" and the first "}" after it, if not empty. tag is ""
// for a prefix without one.
func splitHashTag(prefix string) (before, tag, after string) {
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

// partitionIndex is the partition of task id among n: FNV-1a of the ID,
// modulo n, but for an ID shaped as OccurrenceID writes it, whose
// partition is its periodic task's (periodicPartition): every occurrence
// of a periodic task is in one partition, so the claim of one sees the
// others (misfire.go).
func partitionIndex(id string, n int) int {
	if name, _, ok := parseOccurrenceID(id); ok {
		return periodicPartition(name, n)
	}
	return hashIndex(id, n)
}

// keySlot is the Redis Cluster slot of a hash tag's text: CRC16 (XMODEM)
// modulo 16,384.
func keySlot(tag string) uint16 {
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
	return crc % clusterSlots
}

// validatePartitions checks the setting of WithPartitions.
func validatePartitions(n int) error {
	if n < 1 || n > MaxPartitions {
		return invalid("New", "partitions %d: must be between 1 and %d", n, MaxPartitions)
	}
	return nil
}
