package cron

import (
	"math/bits"
	"time"
)

// Quartz's and Spring's day forms, resolved for one month. A month is
// given by its length (days) and the weekday of its 1st (firstWeekday,
// Sunday = 0); the results are masks of days, bit d for day d.

// domSpecialDays returns the days L, L-n, LW, L-nW and dW select.
func (s *Schedule) domSpecialDays(days, firstWeekday int) uint32 {
	var m uint32
	for b := s.domLast; b != 0; b &= b - 1 {
		if d := days - bits.TrailingZeros32(b); d >= 1 {
			m |= 1 << d
		}
	}
	for b := s.domLastWeekday; b != 0; b &= b - 1 {
		if d := days - bits.TrailingZeros32(b); d >= 1 {
			m |= 1 << nearestWeekday(d, days, firstWeekday)
		}
	}
	for b := s.domWeekday; b != 0; b &= b - 1 {
		if d := bits.TrailingZeros32(b); d <= days {
			m |= 1 << nearestWeekday(d, days, firstWeekday)
		}
	}
	return m
}

// dowSpecialDays returns the days wL and w#k select.
func (s *Schedule) dowSpecialDays(days, firstWeekday int) uint32 {
	var m uint32
	lastWeekday := (firstWeekday + days - 1) % 7
	for b := s.dowLast; b != 0; b &= b - 1 {
		w := bits.TrailingZeros8(b)
		m |= 1 << (days - (lastWeekday-w+7)%7)
	}
	for w, ks := range s.dowNth {
		firstW := 1 + (w-firstWeekday+7)%7
		for b := ks; b != 0; b &= b - 1 {
			if d := firstW + 7*(bits.TrailingZeros8(b)-1); d <= days {
				m |= 1 << d
			}
		}
	}
	return m
}

// nearestWeekday returns the weekday (Monday to Friday) nearest day d of a
// month, never leaving the month, as Quartz's W does: a Saturday moves to
// the Friday before (to Monday the 3rd for Saturday the 1st) and a Sunday
// to the Monday after (to the Friday before for a Sunday that is the
// month's last day).
func nearestWeekday(d, days, firstWeekday int) int {
	switch time.Weekday((firstWeekday + d - 1) % 7) {
	case time.Saturday:
		if d > 1 {
			return d - 1
		}
		return d + 2
	case time.Sunday:
		if d < days {
			return d + 1
		}
		return d - 2
	}
	return d
}

// nextYear returns the first year of the year field at or after y.
func (s *Schedule) nextYear(y int64) (int64, bool) {
	i := max(y-minYearField, 0)
	for ; i <= maxYearField-minYearField; i++ {
		if s.years.has(int(i)) {
			return i + minYearField, true
		}
	}
	return 0, false
}
