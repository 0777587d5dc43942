package engine

import (
	"strings"
	"time"
)

// colStats counts, over every value of a column, how many have each shape
// that type inference cares about. Values are classified in Go as rows
// stream in, so deciding types costs no extra scan of the table.
type colStats struct {
	n, ints, decs, lead, long, bools    int64
	dates, stamps, dmy, mdy, dmydot     int64
	ymdslash, serial, serialInt, digits int64
	intDigits, scale                    int64
}

func (c *colStats) counts() map[string]int64 {
	return map[string]int64{
		"n": c.n, "int": c.ints, "dec": c.decs, "lead": c.lead, "long": c.long, "bool": c.bools,
		"date": c.dates, "ts": c.stamps, "dmy": c.dmy, "mdy": c.mdy, "dmydot": c.dmydot,
		"ymdslash": c.ymdslash, "serial": c.serial, "serialint": c.serialInt, "digitish": c.digits,
		"intdigits": c.intDigits, "scale": c.scale,
	}
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

// add classifies one value; v is trimmed, and empty values are not counted.
func (c *colStats) add(v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	c.n++
	if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		c.bools++
	}
	c.number(v)
	c.date(v)
	if isDigitish(v) {
		c.digits++
	}
}

// number counts the numeric shapes. Canonical numbers only: no plus sign, no
// leading zeros, no exponent, no thousands separators, at most 15
// significant digits; so that every stored number prints back as written.
func (c *colStats) number(v string) {
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
		return
	}
	sig := len(strings.TrimLeft(intPart+frac, "0"))
	if sig > maxSignificant {
		c.long++
		return
	}
	if intPart == "" {
		return
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		c.lead++
		return
	}
	if plus {
		return
	}
	if !hasDot {
		if !(neg && intPart == "0") {
			c.ints++
			c.intDigits = max(c.intDigits, int64(len(intPart)))
			if !neg {
				c.serialInt++
			}
		}
	} else if frac != "" {
		c.decs++
		c.intDigits = max(c.intDigits, int64(len(intPart)))
		c.scale = max(c.scale, int64(len(frac)))
	}
	if !neg && (!hasDot || frac != "") && len(intPart) <= 7 {
		var days int64
		for i := 0; i < len(intPart); i++ {
			days = days*10 + int64(intPart[i]-'0')
		}
		if days <= 2958465 { // 9999-12-31
			c.serial++
		}
	}
}

var stampLayouts = []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"}

// date counts the date shapes, each checked for a real calendar date.
func (c *colStats) date(v string) {
	if len(v) < 8 || len(v) > 26 || v[0] < '0' || v[0] > '9' {
		return
	}
	if len(v) == 10 && v[4] == '-' && v[7] == '-' {
		if _, err := time.Parse("2006-01-02", v); err == nil {
			c.dates++
			c.stamps++
		}
		return
	}
	if len(v) >= 16 && v[4] == '-' && v[7] == '-' && (v[10] == ' ' || v[10] == 'T') {
		if i := strings.IndexByte(v, '.'); i > 0 && (len(v)-i-1 > 6 || !isDigits(v[i+1:])) {
			return
		}
		for _, l := range stampLayouts {
			if _, err := time.Parse(l, v); err == nil {
				c.stamps++
				return
			}
		}
		return
	}
	if len(v) == 10 {
		a, b, y := v[0:2], v[3:5], v[6:10]
		if !isDigits(a) || !isDigits(b) || !isDigits(y) {
			if isDigits(v[0:4]) && v[4] == '/' && v[7] == '/' && isDigits(v[5:7]) && isDigits(v[8:10]) && validDate(v[0:4], v[5:7], v[8:10]) {
				c.ymdslash++
			}
			return
		}
		switch {
		case v[2] == '/' && v[5] == '/':
			if validDate(y, b, a) {
				c.dmy++
			}
			if validDate(y, a, b) {
				c.mdy++
			}
		case v[2] == '.' && v[5] == '.':
			if validDate(y, b, a) {
				c.dmydot++
			}
		}
	}
}

func validDate(y, m, d string) bool {
	_, err := time.Parse("2006-01-02", y+"-"+m+"-"+d)
	return err == nil
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
