package cron

import (
	"hash/fnv"
	"strings"
)

// hashOf returns the number H stands for in field f for key: the 64-bit
// FNV-1a hash of the key's bytes, a zero byte and the field's name
// ("second", "minute", "hour", "day-of-month", "month" or "day-of-week"),
// mixed by MurmurHash3's 64-bit finalizer (FNV's low bits alone would tie
// the minute to the hour). The package doc states this formula, so the
// times a key picks never change between versions.
func hashOf(key string, f field) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(f.name))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// parseHash parses Jenkins's H forms: H, H(a-b), H/n and H(a-b)/n. H picks
// lo + hash mod (hi-lo+1) in its range, which is the field's whole range
// except for day-of-month (1-28, which every month has) and day-of-week
// (one week, each day once); H/n picks the offset lo + hash mod n and
// steps by n from it.
func (p *fieldParser) parseHash(part string, col int, f field, v *fieldValues) *elementError {
	const want = "want H, H(a-b), H/n or H(a-b)/n"
	if f.kind == yearKind {
		return errAt(col, "H is not accepted in the year field (want %s)", p.accepted(f))
	}
	if !p.hasHashKey {
		return errAt(col, "H needs a key to hash: pass WithHashKey (Jenkins hashes the job's name)")
	}
	lo, hi := f.min, f.max
	switch {
	case f.kind == domKind:
		hi = 28
	case f.kind == dowKind:
		hi = lo + 6
	}
	rest := part[1:]
	if strings.HasPrefix(rest, "(") {
		inner, after, ok := strings.Cut(rest[1:], ")")
		loText, hiText, isRange := strings.Cut(inner, "-")
		if !ok || !isRange {
			return errAt(col, "%q has no range a-b in parentheses (%s)", part, want)
		}
		var err error
		if lo, err = parseValue(loText, f); err != nil {
			return errAt(col+2, "%s in H(a-b) (%s)", err, want)
		}
		if hi, err = parseValue(hiText, f); err != nil {
			return errAt(col+3+len(loText), "%s in H(a-b) (%s)", err, want)
		}
		if lo > hi {
			return errAt(col, "range %q runs backwards (want a-b with a <= b)", inner)
		}
		rest = after
	}
	span := hi - lo + 1
	h := hashOf(p.hashKey, f)
	if rest == "" {
		return p.addRange(v, f, lo+int(h%uint64(span)), lo+int(h%uint64(span)), 1)
	}
	stepText, ok := strings.CutPrefix(rest, "/")
	if !ok {
		return errAt(col, "%q is not an H form (%s)", part, want)
	}
	n, err := parseNumber(stepText)
	if err != nil || n < 1 || n > span {
		return errAt(col+len(part)-len(stepText), "step %q is not a number in 1-%d", stepText, span)
	}
	return p.addRange(v, f, lo+int(h%uint64(n)), hi, n)
}
