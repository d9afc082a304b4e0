package driver

import (
	"hash/fnv"
	"strings"
	"time"
)

// PartitionOf is the partition of task id among n: FNV-1a of the ID,
// modulo n, but for an ID shaped as OccurrenceID writes it, whose
// partition is its periodic task's (PeriodicPartition): every occurrence
// of a periodic task is in one partition, so the claim of one sees the
// others. Every driver places tasks so, and the nodes own partitions by
// it.
func PartitionOf(id string, n int) int {
	if name, _, ok := ParseOccurrenceID(id); ok {
		return PeriodicPartition(name, n)
	}
	return hashIndex(id, n)
}

// PeriodicPartition is the partition of periodic task name among n: the
// partition of its occurrences and of its cursor.
func PeriodicPartition(name string, n int) int { return hashIndex(name, n) }

// hashIndex is FNV-1a of s, modulo n.
func hashIndex(s string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}

// OccurrenceID is the ID of the occurrence of periodic task name due at
// due: name@due in UTC, RFC 3339 with nanoseconds.
func OccurrenceID(name string, due time.Time) string {
	return name + "@" + due.UTC().Format(time.RFC3339Nano)
}

// ParseOccurrenceID splits an ID shaped as OccurrenceID writes it into the
// name and the due time; ok is false for any other ID.
func ParseOccurrenceID(id string) (name string, due time.Time, ok bool) {
	at := strings.LastIndexByte(id, '@')
	if at <= 0 {
		return "", time.Time{}, false
	}
	text := id[at+1:]
	due, err := time.Parse(time.RFC3339Nano, text)
	if err != nil || due.UTC().Format(time.RFC3339Nano) != text {
		return "", time.Time{}, false
	}
	return id[:at], due, true
}
