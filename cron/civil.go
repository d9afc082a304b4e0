package cron

// Civil (wall-clock) date arithmetic on plain integers, so that Next can
// search wall times without building a time.Time per candidate. A civil time
// is counted in "civil seconds": seconds since 1970-01-01 00:00:00 of the
// proleptic Gregorian calendar with no zone attached. An instant in a zone
// with UTC offset off (seconds east) has civil seconds instant+off.

const (
	secondsPerMinute = 60
	secondsPerHour   = 60 * secondsPerMinute
	secondsPerDay    = 24 * secondsPerHour

	// maxYear is the last year Next searches: past it, Next reports no run.
	maxYear = 9999
)

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d
// (Howard Hinnant's days_from_civil; exact for every year, negative ones too).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekdayOfDays returns the weekday (0 = Sunday) of the day that is z days
// after 1970-01-01, a Thursday.
func weekdayOfDays(z int64) int {
	w := (z + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

// floorDiv returns a/b rounded toward negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// isLeap reports whether y is a leap year of the Gregorian calendar.
func isLeap(y int64) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// daysIn returns the number of days of month m (1-12) of year y.
func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

// maxDaysIn returns the most days month m ever has: 29 for February.
func maxDaysIn(m int) int {
	if m == 2 {
		return 29
	}
	return daysIn(1, m)
}
