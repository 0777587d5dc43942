package ingest

import (
	"math"
	"strconv"
	"strings"
	"time"

	"datadesk/engine/typing"
)

// fmtKind is what a number format makes of the number under it.
type fmtKind uint8

const (
	fmtNumber   fmtKind = iota // a plain number, a percentage, a currency, an elapsed duration
	fmtDate                    // a calendar date
	fmtDateTime                // a date with a time of day
	fmtTime                    // a time of day only
)

// builtinFormatKind classifies the number formats Excel and its readers
// know by id alone (xlrd's formatting.py and openpyxl's styles/numbers.py
// list the same): 14-17 dates, 18-21 and 45, 47 times, 22 a date and time,
// 46 an elapsed duration ([h]:mm:ss), and the East Asian locale ids 27-36
// and 50-58, dates except 32 and 33 (hours and minutes in every locale).
func builtinFormatKind(id int) fmtKind {
	switch {
	case id >= 14 && id <= 17:
		return fmtDate
	case id >= 18 && id <= 21, id == 45, id == 47, id == 32, id == 33:
		return fmtTime
	case id == 22:
		return fmtDateTime
	case id >= 27 && id <= 36, id >= 50 && id <= 58:
		return fmtDate
	}
	return fmtNumber
}

// formatKind classifies a number format by id, or by its code when the
// workbook defines one. The code's quoted text, escaped characters, fill
// and padding characters and bracketed parts ([Red], [$-409], [>=100]) are
// dropped first; then day, month and year letters make a date, hours and
// seconds a time (an AM/PM marker alone does not). A format that starts
// with an elapsed-time bracket ([h]:mm:ss, [mm]:ss) is a duration, which
// stays a number, as openpyxl has it.
func formatKind(id int, code string) fmtKind {
	if code == "" {
		return builtinFormatKind(id)
	}
	var date, clock, month bool
	lower := strings.ToLower(code)
	for i := 0; i < len(lower); i++ {
		switch c := lower[i]; c {
		case '"':
			j := strings.IndexByte(lower[i+1:], '"')
			if j < 0 {
				i = len(lower)
			} else {
				i += j + 1
			}
		case '\\', '_', '*':
			i++
		case '[':
			j := strings.IndexByte(lower[i+1:], ']')
			if j < 0 {
				return fmtNumber
			}
			inner := lower[i+1 : i+1+j]
			if inner != "" && strings.Trim(inner, "hms") == "" {
				if !date && !clock && !month {
					return fmtNumber // an elapsed time: [h]:mm:ss
				}
				clock = true
			}
			i += j + 1
		case ';':
			// The first section decides; the others are for negative
			// numbers, zero and text.
			i = len(lower)
		case 'y', 'd', 'g', 'e':
			if c == 'e' && (i+1 < len(lower) && (lower[i+1] == '+' || lower[i+1] == '-')) {
				return fmtNumber // scientific notation
			}
			if c == 'g' && strings.HasPrefix(lower[i:], "general") {
				i += len("general") - 1
				continue
			}
			if c == 'e' {
				continue
			}
			date = true
		case 'h', 's':
			clock = true
		case 'm':
			month = true
		}
	}
	switch {
	case date && clock:
		return fmtDateTime
	case date || month && !clock:
		return fmtDate
	case clock:
		return fmtTime
	}
	return fmtNumber
}

// maxSerial is 9999-12-31, the last day a spreadsheet shows as a date.
const maxSerial = 2958465

var (
	epoch1900 = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	epoch1904 = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
)

// numberCell renders a number under a format of kind fk the way a person
// sees it, with its kind. Under a date or time format, the value decides
// as xlrd and openpyxl do: below 1 a time of day, a whole number a date
// (a date and time under a format that shows both), anything else a date
// and time, so that no time is dropped. Day numbers
// count from 1899-12-30 (days before Lotus's phantom 1900-02-29, day 60,
// from a day later) or, in the 1904 system, from 1904-01-01; fractions are
// times of day, kept to the millisecond. A day number outside 0 to
// 9999-12-31 stays a number.
func numberCell(v float64, fk fmtKind, date1904 bool) (string, typing.CellKind) {
	if fk == fmtNumber || v < 0 || v >= maxSerial+1 || math.IsNaN(v) {
		return formatNumber(v), typing.KindNumber
	}
	days := math.Floor(v)
	ms := math.Round((v - days) * 86400000)
	if ms >= 86400000 { // 23:59:59.9996 rounds to the next day
		days, ms = days+1, 0
	}
	base := epoch1900
	switch {
	case date1904:
		base = epoch1904
	case days < 61:
		base = epoch1900.AddDate(0, 0, 1)
	}
	t := base.AddDate(0, 0, int(days)).Add(time.Duration(ms) * time.Millisecond)
	switch {
	case days == 0:
		return clockText(t), typing.KindTime
	case ms == 0 && fk != fmtDateTime:
		return t.Format("2006-01-02"), typing.KindDate
	}
	return t.Format("2006-01-02") + "T" + clockText(t), typing.KindDateTime
}

// clockText is a time of day, with milliseconds when there are any.
func clockText(t time.Time) string {
	if t.Nanosecond() == 0 {
		return t.Format("15:04:05")
	}
	return strings.TrimRight(t.Format("15:04:05.000"), "0")
}

// formatNumber writes a number in its shortest exact form, without an
// exponent unless the number is very large or very small (as JavaScript
// writes numbers: 0.000001 but 1e-7), so that tiny values read as the
// doubles they are rather than as decimals of twenty places.
func formatNumber(v float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// isoCell reads a cell an XLSX file stores as an ISO 8601 date (t="d").
func isoCell(v string) (string, typing.CellKind) {
	for _, l := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02", "15:04:05.999999999"} {
		t, err := time.Parse(l, v)
		if err != nil {
			continue
		}
		t = t.Round(time.Millisecond)
		switch {
		case l == "2006-01-02":
			return t.Format("2006-01-02"), typing.KindDate
		case strings.HasPrefix(l, "15"):
			return clockText(t), typing.KindTime
		case t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0:
			return t.Format("2006-01-02"), typing.KindDate
		}
		return t.Format("2006-01-02") + "T" + clockText(t), typing.KindDateTime
	}
	return v, typing.KindText
}

// isoSerial turns a date or date-time read by isoCell back into a day
// number, so that the cell's number format can decide how it shows.
func isoSerial(text string, kind typing.CellKind, date1904 bool) (float64, bool) {
	var t time.Time
	var err error
	switch kind {
	case typing.KindDate:
		t, err = time.Parse("2006-01-02", text)
	case typing.KindDateTime:
		t, err = time.Parse("2006-01-02T15:04:05.999", text)
	default:
		return 0, false
	}
	if err != nil {
		return 0, false
	}
	base := epoch1900
	if date1904 {
		base = epoch1904
	}
	days := t.Sub(base).Hours() / 24
	if !date1904 && days < 61 {
		days--
	}
	return days, days >= 0
}

// boolText is how a spreadsheet shows a boolean.
func boolText(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}
