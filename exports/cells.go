package exports

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// Excel's number limits.
const (
	// maxExactDigits is how many significant digits Excel keeps and shows
	// of a number; a number with more is written as text so that it is
	// never rounded.
	maxExactDigits = 15
	// excelFirstYear and excelLastYear bound the dates Excel shows in the
	// 1900 date system; others are written as ISO text.
	excelFirstYear = 1900
	excelLastYear  = 9999
)

// excelEpoch is day 0 of the 1900 date system as Unix seconds
// (1899-12-30, so that 1900-03-01 is day 61).
const excelEpoch = -2209161600

// excelSerial returns t's day number in Excel's 1900 date system, with the
// time of day as a fraction cut to milliseconds, which is what Excel shows.
// ok is false outside 1900-01-01 to 9999-12-31. Days before 1900-03-01 count
// one less: Excel keeps Lotus's phantom 1900-02-29 as day 60.
func excelSerial(t time.Time) (serial float64, ok bool) {
	if t.Year() < excelFirstYear || t.Year() > excelLastYear {
		return 0, false
	}
	// The wall clock as written, whatever the location.
	u := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	secs := u.Unix() - excelEpoch
	days := secs / 86400
	if days < 61 {
		days--
	}
	ms := (secs%86400)*1000 + int64(u.Nanosecond()/1e6)
	serial = float64(days) + float64(ms)/86_400_000
	// Excel keeps 15 significant digits, and excelize cuts a number to
	// them: round to 15 here so that the millisecond reads back (near year
	// 9999 only eight decimals of a day remain), and never up into the
	// next day (or, on 9999-12-31, past the last day Excel has).
	serial, _ = strconv.ParseFloat(strconv.FormatFloat(serial, 'g', maxExactDigits, 64), 64)
	if serial >= float64(days+1) {
		serial = math.Nextafter(float64(days+1), 0)
	}
	return serial, true
}

// plainNumber matches text a spreadsheet reads as a plain number: an
// optional sign, digits with an optional point, an optional exponent.
var plainNumber = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// significantDigits counts the significant digits of a decimal number's
// text (leading zeros and an exponent do not count, trailing zeros of a
// fraction do: 1.50 has three).
func significantDigits(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(s, "+-")
	s = strings.Replace(s, ".", "", 1)
	s = strings.TrimLeft(s, "0")
	return len(s)
}

// decimalScale is the number of digits after the point of a decimal's
// text, or 0 for exponent forms.
func decimalScale(s string) int {
	if strings.ContainsAny(s, "eE") {
		return 0
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// positiveZero turns -0 into 0: spreadsheets have no negative zero, and the
// text forms would otherwise show "-0" for a value equal to 0.
func positiveZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// cellStyles are the number formats of a workbook's typed cells.
type cellStyles struct {
	f                  *excelize.File
	date, ts, tsMillis int
	clock, clockMillis int
	scales             map[int]int
}

func newCellStyles(f *excelize.File) (*cellStyles, error) {
	s := &cellStyles{f: f, scales: map[int]int{}}
	var err error
	if s.date, err = s.custom("yyyy-mm-dd"); err != nil {
		return nil, err
	}
	if s.ts, err = s.custom("yyyy-mm-dd hh:mm:ss"); err != nil {
		return nil, err
	}
	if s.tsMillis, err = s.custom("yyyy-mm-dd hh:mm:ss.000"); err != nil {
		return nil, err
	}
	if s.clock, err = s.custom("hh:mm:ss"); err != nil {
		return nil, err
	}
	if s.clockMillis, err = s.custom("hh:mm:ss.000"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *cellStyles) custom(format string) (int, error) {
	return s.f.NewStyle(&excelize.Style{CustomNumFmt: &format})
}

// scale returns the style that shows a number with n decimal places, so
// that 1.50 reads 1.50.
func (s *cellStyles) scale(n int) (int, error) {
	if id, ok := s.scales[n]; ok {
		return id, nil
	}
	id, err := s.custom("0." + strings.Repeat("0", n))
	if err != nil {
		return 0, err
	}
	s.scales[n] = id
	return id, nil
}

// Why a column's cells were written as text in a workbook.
const (
	noteEarlyDates = "dates outside 1900-01-01 to 9999-12-31, which Excel cannot show as dates, are written as ISO text"
	noteLongNumber = "numbers of more than 15 significant digits, which Excel would round, are written as text"
	noteNotFinite  = "NaN and infinities, which Excel has no number for, are written as text"
)

// xlsxCell turns one value of column c into what the stream writer takes.
// note is set when the value had to be written as text.
func (s *cellStyles) xlsxCell(v any, c *catalog.Column) (cell any, note string, err error) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return textCell(x, c.Type), noteNotFinite, nil
		}
		return positiveZero(x), "", nil
	case int64:
		if x >= 1e15 || x <= -1e15 {
			return strconv.FormatInt(x, 10), noteLongNumber, nil
		}
		return x, "", nil
	case json.Number:
		f, perr := strconv.ParseFloat(x.String(), 64)
		if perr != nil || significantDigits(x.String()) > maxExactDigits && !zeroTail(x.String()) {
			return x.String(), noteLongNumber, nil
		}
		n := decimalScale(x.String())
		if n == 0 {
			return positiveZero(f), "", nil
		}
		style, err := s.scale(n)
		return excelize.Cell{StyleID: style, Value: positiveZero(f)}, "", err
	case time.Time:
		if c.Type == typing.TypeTime {
			// A time of day is the fraction of a day Excel keeps for it.
			style := s.clock
			if x.Nanosecond() >= 1e6 {
				style = s.clockMillis
			}
			day := time.Duration(x.Hour())*time.Hour + time.Duration(x.Minute())*time.Minute +
				time.Duration(x.Second())*time.Second + time.Duration(x.Nanosecond())
			return excelize.Cell{StyleID: style, Value: day.Seconds() / 86400}, "", nil
		}
		serial, ok := excelSerial(x)
		if !ok {
			return textCell(x, c.Type), noteEarlyDates, nil
		}
		style := s.date
		if c.Type == typing.TypeTimestamp {
			style = s.ts
			if x.Nanosecond() >= 1e6 {
				style = s.tsMillis
			}
		}
		return excelize.Cell{StyleID: style, Value: serial}, "", nil
	}
	return v, "", nil
}

// zeroTail reports whether a decimal's digits past the 15th are all zeros
// after the point (12.500000000000000000 still fits a double exactly).
func zeroTail(s string) bool {
	i := strings.IndexByte(s, '.')
	if i < 0 || strings.ContainsAny(s, "eE") {
		return false
	}
	trimmed := strings.TrimRight(s, "0")
	return significantDigits(strings.TrimSuffix(trimmed, ".")) <= maxExactDigits
}

// textCell is a value as CSV and table JSON write it: numbers exactly,
// dates and times in ISO form.
func textCell(v any, typ string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
		return strconv.FormatFloat(positiveZero(x), 'f', -1, 64)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		switch typ {
		case typing.TypeTimestamp:
			return x.Format(catalog.TimestampLayout)
		case typing.TypeTime:
			return x.Format(catalog.TimeLayout)
		}
		return x.Format("2006-01-02")
	}
	return fmt.Sprint(v)
}

// jsonCell is a value as table JSON carries it: numbers as numbers, except
// NaN and infinities, which JSON has no number for, as text.
func jsonCell(v any, typ string) any {
	switch x := v.(type) {
	case time.Time:
		return textCell(x, typ)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return textCell(x, typ)
		}
		return positiveZero(x)
	}
	return v
}
