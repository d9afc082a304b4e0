package cron

import "sync/atomic"

// spanCache holds one zoneSpan that goroutines share without a lock and
// without allocating: a sequence lock over atomic fields. A writer makes
// seq odd, writes the fields and makes seq even again; a reader that sees
// the same even seq before and after reading the fields read one writer's
// span whole (Go's atomics are sequentially consistent). Writers that meet
// another writer skip the store: the cache is only a cache.
type spanCache struct {
	seq                atomic.Uint64 // odd while a writer writes the fields
	start, end, offset atomic.Int64  // the zoneSpan's fields
	flags              atomic.Uint32 // spanValid, spanHasStart, spanHasEnd
}

// The bits of spanCache.flags.
const (
	spanValid = 1 << iota
	spanHasStart
	spanHasEnd
)

// load returns the cached span, or false if there is none or a writer is
// busy.
func (c *spanCache) load() (zoneSpan, bool) {
	seq := c.seq.Load()
	if seq&1 != 0 {
		return zoneSpan{}, false
	}
	sp := zoneSpan{start: c.start.Load(), end: c.end.Load(), offset: c.offset.Load()}
	flags := c.flags.Load()
	if c.seq.Load() != seq || flags&spanValid == 0 {
		return zoneSpan{}, false
	}
	sp.hasStart, sp.hasEnd = flags&spanHasStart != 0, flags&spanHasEnd != 0
	return sp, true
}

// store caches sp, unless another goroutine is storing.
func (c *spanCache) store(sp zoneSpan) {
	seq := c.seq.Load()
	if seq&1 != 0 || !c.seq.CompareAndSwap(seq, seq+1) {
		return
	}
	flags := uint32(spanValid)
	if sp.hasStart {
		flags |= spanHasStart
	}
	if sp.hasEnd {
		flags |= spanHasEnd
	}
	c.start.Store(sp.start)
	c.end.Store(sp.end)
	c.offset.Store(sp.offset)
	c.flags.Store(flags)
	c.seq.Store(seq + 2)
}
