package typing

import (
	"strings"
	"time"
)

// Stats counts, over every value of a column, how many have each shape
// that type inference cares about. Values are classified in Go as rows
// stream in, so deciding types costs no extra scan of the table.
type Stats struct {
	N, Ints, Decs, Lead, Long, Bools    int64
	Dates, Stamps, DMY, MDY, DMYDot     int64
	YMDSlash, Serial, SerialInt, Digits int64
	IntDigits, Scale                    int64
	// LongPoint counts the Long values with a decimal point: numbers
	// printed by a program, never codes.
	LongPoint int64
	// Written forms (forms.go): values read only once a currency sign,
	// percent sign, thousands separators or parentheses are dropped, or in
	// scientific notation.
	Forms, Sci, Grouped, Ambiguous, Points int64
	Percent, Paren                         int64
	Currencies                             map[string]int64
	// Zoned counts dates and times with a zone; Dateish, values that are
	// dates in some day/month order, or a year and a month; YearMonths,
	// those last (1953-04).
	Zoned, Dateish, YearMonths int64
	// Trimmed says no value needs trimming before its cast (the SQL quick
	// pass proved it), which spares the cast a trim of every value.
	Trimmed bool
	// Blank counts cells of only spaces, which are empty; Padded, values
	// with spaces around them, which are trimmed. Neither counts in N's
	// shapes beyond the trimmed value.
	Blank, Padded int64
}

// Counts returns the counts by name, as Decide and the SQL pass read them:
// "n" values, "int" whole numbers, "lead" leading zeros, "cur:$" values
// with that currency sign, and so on.
func (c *Stats) Counts() map[string]int64 {
	m := map[string]int64{
		"n": c.N, "int": c.Ints, "dec": c.Decs, "lead": c.Lead, "long": c.Long, "bool": c.Bools,
		"date": c.Dates, "ts": c.Stamps, "dmy": c.DMY, "mdy": c.MDY, "dmydot": c.DMYDot,
		"ymdslash": c.YMDSlash, "serial": c.Serial, "serialint": c.SerialInt, "digitish": c.Digits,
		"intdigits": c.IntDigits, "scale": c.Scale, "longpoint": c.LongPoint,
		"form": c.Forms, "sci": c.Sci, "grouped": c.Grouped, "ambiguous": c.Ambiguous, "point": c.Points,
		"pct": c.Percent, "paren": c.Paren, "tsz": c.Zoned, "dateish": c.Dateish, "ym": c.YearMonths,
		"blank": c.Blank, "padded": c.Padded,
	}
	for s, k := range c.Currencies {
		m["cur:"+s] = k
	}
	return m
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Add classifies one value; v is trimmed, and empty values are not
// counted, but a cell of only spaces is counted as Blank and a value with
// spaces around it as Padded.
func (c *Stats) Add(v string) {
	t := TrimValue(v)
	if t == "" {
		if v != "" {
			c.Blank++
		}
		return
	}
	if len(t) != len(v) {
		c.Padded++
	}
	v = t
	c.N++
	if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		c.Bools++
	}
	if !c.number(v) {
		c.written(v)
	}
	c.date(v)
	if isDigitish(v) {
		c.Digits++
	}
}

// number counts the numeric shapes. Canonical numbers only: no plus sign, no
// leading zeros, no exponent, no thousands separators, at most 15
// significant digits; so that every stored number prints back as written.
// It reports whether v was a number in that form (or an identifier-like
// digit string), so that written forms are tried only on the rest.
func (c *Stats) number(v string) bool {
	body, neg, plus := v, false, false
	switch v[0] {
	case '-':
		body, neg = v[1:], true
	case '+':
		body, plus = v[1:], true
	}
	intPart, frac, hasDot := strings.Cut(body, ".")
	allDigits := (intPart == "" || isDigits(intPart)) && (frac == "" || isDigits(frac)) && (intPart != "" || frac != "")
	if !allDigits {
		return false
	}
	sig := len(strings.TrimLeft(intPart+frac, "0"))
	if sig > maxSignificant {
		c.Long++
		if hasDot {
			c.LongPoint++
		}
		return true
	}
	if intPart == "" {
		return true
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		c.Lead++
		return true
	}
	if plus {
		return true
	}
	if !hasDot {
		if !(neg && intPart == "0") {
			c.Ints++
			c.IntDigits = max(c.IntDigits, int64(len(intPart)))
			if !neg {
				c.SerialInt++
			}
		}
	} else if frac != "" {
		c.Decs++
		c.IntDigits = max(c.IntDigits, int64(len(intPart)))
		c.Scale = max(c.Scale, int64(len(frac)))
	}
	if !neg && (!hasDot || frac != "") && len(intPart) <= 7 {
		var days int64
		for i := 0; i < len(intPart); i++ {
			days = days*10 + int64(intPart[i]-'0')
		}
		if days <= 2958465 { // 9999-12-31
			c.Serial++
		}
	}
	return true
}

// date counts the date shapes, each checked for a real calendar date.
func (c *Stats) date(v string) {
	if len(v) == 7 && v[4] == '-' && isDigits(v[:4]) && isDigits(v[5:]) && v[5:] >= "01" && v[5:] <= "12" {
		// A year and a month, as statistics publish monthly series.
		c.YearMonths++
		c.Dateish++
		return
	}
	if len(v) < 8 || len(v) > 40 || v[0] < '0' || v[0] > '9' {
		return
	}
	if len(v) >= 10 && v[4] == '-' && v[7] == '-' {
		if !validISODate(v[:10]) {
			return
		}
		switch {
		case len(v) == 10:
			c.Dates++
			c.Stamps++
		case v[10] == ' ' || v[10] == 'T':
			switch ok, zoned := timeShape(v[11:]); {
			case ok && zoned:
				c.Zoned++
			case ok:
				c.Stamps++
			}
		}
		return
	}
	sep := byte('/')
	if strings.IndexByte(v, '/') < 0 {
		sep = '.'
	}
	parts := strings.Split(v, string(sep))
	if len(parts) != 3 {
		return
	}
	for _, p := range parts {
		if !isDigits(p) {
			return
		}
	}
	a, b, y := parts[0], parts[1], parts[2]
	dateish := false
	switch {
	case sep == '/' && len(a) == 4 && len(b) <= 2 && len(y) <= 2:
		if validDate(a, b, y) {
			c.YMDSlash++
			dateish = true
		}
	case len(a) <= 2 && len(b) <= 2 && len(y) == 4 && sep == '/':
		if validDate(y, b, a) {
			c.DMY++
			dateish = true
		}
		if validDate(y, a, b) {
			c.MDY++
			dateish = true
		}
	case len(a) <= 2 && len(b) <= 2 && len(y) == 4:
		if validDate(y, b, a) {
			c.DMYDot++
			dateish = true
		}
	}
	if dateish {
		c.Dateish++
	}
}

func validISODate(v string) bool {
	return isDigits(v[0:4]) && isDigits(v[5:7]) && isDigits(v[8:10]) && validDate(v[0:4], v[5:7], v[8:10])
}

// validDate reports whether year, month and day (digits, months and days of
// one or two) make a real calendar date.
func validDate(y, m, d string) bool {
	yy, mm, dd := atoi(y), atoi(m), atoi(d)
	if len(m) > 2 || len(d) > 2 || len(y) != 4 || mm < 1 || dd < 1 {
		return false
	}
	t := time.Date(yy, time.Month(mm), dd, 0, 0, 0, 0, time.UTC)
	return t.Year() == yy && int(t.Month()) == mm && t.Day() == dd
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// timeShape reads the time after an ISO date: hh:mm, optionally :ss and one
// to six fractional digits (microseconds, what a timestamp keeps), then
// optionally a zone: Z, ±hh, ±hhmm or ±hh:mm.
func timeShape(t string) (ok, zoned bool) {
	two := func(s string, limit int) bool { return len(s) >= 2 && isDigits(s[:2]) && atoi(s[:2]) < limit }
	if len(t) < 5 || !two(t, 24) || t[2] != ':' || !two(t[3:], 60) {
		return false, false
	}
	t = t[5:]
	seconds := len(t) > 0 && t[0] == ':'
	if seconds {
		if !two(t[1:], 60) {
			return false, false
		}
		t = t[3:]
		if len(t) > 0 && t[0] == '.' {
			n := 1
			for n < len(t) && t[n] >= '0' && t[n] <= '9' {
				n++
			}
			if n == 1 || n > 7 {
				return false, false
			}
			t = t[n:]
		}
	}
	switch {
	case t == "":
		return true, false
	case !seconds:
		// DuckDB reads a zone only after the seconds.
		return false, false
	case t == "Z":
		return true, true
	case t[0] == '+' || t[0] == '-':
		z := t[1:]
		if !two(z, 15) {
			return false, false
		}
		z = z[2:]
		if len(z) == 3 && z[0] == ':' {
			z = z[1:]
		}
		if z == "" || len(z) == 2 && two(z, 60) {
			return true, true
		}
	}
	return false, false
}

// isDigitish reports whether v looks like a phone number or code: digits
// with spaces, brackets, dots, slashes or dashes, maybe a leading plus.
func isDigitish(v string) bool {
	s := strings.TrimPrefix(v, "+")
	s = strings.TrimPrefix(s, "(")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= '0' && b <= '9', b == ' ', b == '(', b == ')', b == '.', b == '/', b == '-':
		default:
			return false
		}
	}
	return true
}

// SpaceChars are the characters trimmed from a value before it is
// classified and cast, in Go and in SQL alike. ASCII only: DuckDB's trim
// removes bytes, and the bytes of a wider space would eat into other
// characters (the first byte of U+2000 is the first byte of €).
const SpaceChars = " \t\n\v\f\r"

// TrimValue trims a value as ducksql.Trim does in SQL.
func TrimValue(v string) string { return strings.Trim(v, SpaceChars) }
