package scheduler

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// inWheel reports whether t waits in the timing wheel. q.mu.
func inWheel(t *futureTask) bool { return t.heapIndex <= -2 }

// TestInternalWheelTakesFarTasksOnly: a task due beyond the horizon waits in
// the wheel, one due sooner (or beyond the wheel's top level) in the heap;
// the leader's timer is armed for the wheel task's own time, and when the
// clock gets there the task moves into the heap and runs.
func TestInternalWheelTakesFarTasksOnly(t *testing.T) {
	clk := newFakeClock()
	s := newTestScheduler(t, 1, clk)
	far, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	near, err := s.Schedule(nop, time.Second)
	require.NoError(t, err)
	huge, err := s.Schedule(nop, math.MaxInt64)
	require.NoError(t, err)
	require.NoError(t, s.AwaitIdle(testCtx(t)))

	s.q.mu.Lock()
	require.True(t, inWheel(far.(*futureTask)), "an hour away: the wheel")
	require.False(t, inWheel(near.(*futureTask)), "a second away: the heap")
	require.False(t, inWheel(huge.(*futureTask)), "beyond the top level: the heap")
	require.Equal(t, 3, s.q.lenLocked())
	require.Equal(t, 2, s.q.heap.len())
	s.q.mu.Unlock()

	clk.Advance(time.Second)
	require.NoError(t, near.Wait(testCtx(t)))
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	s.q.mu.Lock()
	require.Equal(t, int64(time.Hour), s.q.leader.deadline, "the leader waits for the wheel task's own time")
	s.q.mu.Unlock()

	clk.Advance(time.Hour - time.Second - 1)
	require.NoError(t, s.AwaitIdle(testCtx(t)))
	require.False(t, far.IsDone(), "ran before its time")
	clk.Advance(1)
	require.NoError(t, far.Wait(testCtx(t)))
	require.False(t, huge.IsDone())
}

// TestInternalWheelCancel: canceling a wheel task with remove-on-cancel
// unlinks it from its slot; the slot's bit clears with its last task.
func TestInternalWheelCancel(t *testing.T) {
	s := newTestScheduler(t, 1, newFakeClock(), WithRemoveOnCancel(true))
	a, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	b, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	s.q.mu.Lock()
	ta, tb := a.(*futureTask), b.(*futureTask)
	require.Equal(t, ta.heapIndex, tb.heapIndex, "same time, same slot")
	level, slot := wheelSlotOf(ta.heapIndex)
	s.q.mu.Unlock()

	require.True(t, a.Cancel(false))
	s.q.mu.Lock()
	require.Equal(t, int32(notQueued), ta.heapIndex)
	require.Nil(t, ta.next)
	require.Nil(t, ta.prev)
	require.Equal(t, 1, s.q.wheel.count)
	require.NotZero(t, s.q.wheel.levels[level].occupied&(1<<slot))
	s.q.mu.Unlock()

	require.True(t, b.Cancel(false))
	s.q.mu.Lock()
	require.Zero(t, s.q.wheel.count)
	require.Zero(t, s.q.wheel.levels[level].occupied, "the slot's bit is cleared with its last task")
	s.q.mu.Unlock()
	require.Zero(t, s.Stats().Queued)
}

// TestInternalWheelOff: WithTimingWheel(false) queues everything in the heap.
func TestInternalWheelOff(t *testing.T) {
	s := newTestScheduler(t, 1, newFakeClock(), WithTimingWheel(false))
	f, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	require.Nil(t, s.q.wheel)
	require.Equal(t, int32(0), f.(*futureTask).heapIndex)
}

// TestInternalWheelPlaceAndSlotStart: every time from base to the top
// level's span lands in a slot whose start is at or before it and whose
// end is after it, at the lowest level that reaches it.
func TestInternalWheelPlaceAndSlotStart(t *testing.T) {
	for _, base := range []int64{0, 12345, 1 << 40, math.MaxInt64 - 1<<45, -1 << 30} {
		w := newTimingWheel(defaultWheelTickShift, defaultWheelHorizon)
		w.base = base
		for _, off := range []int64{0, 1, 1<<20 - 1, 1 << 20, 1 << 26, 1<<26 + 7, 1 << 32, 1 << 38, 1 << 44, 1 << 50, 1<<55 + 3} {
			when := base + off
			level, slot, ok := w.place(when)
			require.True(t, ok, "base %d, offset %d", base, off)
			start := w.slotStart(level, slot)
			width := int64(1) << w.shift(level)
			require.GreaterOrEqual(t, when-start, int64(0), "base %d, offset %d: the slot starts after the time", base, off)
			require.Less(t, when-start, width, "base %d, offset %d: the slot ends before the time", base, off)
			if level > 0 {
				below := uint64(base)&(uint64(width>>wheelSlotBits)-1) + uint64(off)
				require.GreaterOrEqual(t, below>>w.shift(level-1), uint64(wheelSlots), "base %d, offset %d: a lower level reaches it", base, off)
			}
		}
		_, _, ok := w.place(base + 1<<56)
		require.False(t, ok, "beyond the top level")
		_, _, ok = w.place(base - 1)
		require.False(t, ok, "before base")
	}
}
