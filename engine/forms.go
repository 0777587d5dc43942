package engine

import (
	"fmt"
	"strings"
)

// Numbers as people write them: with thousands separators, a currency sign
// or ISO code before or after, a percent sign, accounting parentheses for
// negatives, or in scientific notation. A column becomes numeric only when
// every value reads as a number in one unambiguous form; what was dropped
// to read it is named in the import report.

// currencySigns are the signs and ISO 4217 codes read as a currency; one
// column may use only one of them.
var currencySigns = []string{
	"$", "€", "£", "¥",
	"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "HKD", "SGD", "SEK", "NOK", "DKK",
	"PLN", "CZK", "HUF", "INR", "BRL", "MXN", "ZAR", "KRW", "TRY", "ILS", "AED", "SAR",
}

// maxExponent keeps scientific notation within a double's range.
const maxExponent = 300

// writtenNumber is one value read as a number in a written form.
type writtenNumber struct {
	currency  string // the sign or code, "" when none
	percent   bool
	paren     bool // an accounting negative, (45.00)
	grouped   bool // thousands separators
	ambiguous bool // one comma group and no decimal point: 1,234 or 1.234
	sci       bool // scientific notation
	point     bool // a decimal point
	lead      bool // a leading zero: an identifier, not a number
	// intDigits and scale describe the value written out in full, before
	// a percent sign divides it; sig counts its significant digits.
	intDigits, scale, sig int
}

// form reports whether the value needs more than a plain cast to read.
func (w writtenNumber) form() bool {
	return w.currency != "" || w.percent || w.paren || w.grouped || w.sci
}

// readWritten reads v (trimmed, not empty) as a number in a written form.
// Plain numbers read too (form() is then false); a plus sign does not, as
// it marks phone numbers far more often than quantities.
func readWritten(v string) (writtenNumber, bool) {
	var w writtenNumber
	s := v
	if len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		w.paren, s = true, strings.TrimSpace(s[1:len(s)-1])
	}
	neg := false
	if strings.HasPrefix(s, "-") && !w.paren {
		neg, s = true, s[1:]
	}
	s, w.currency = cutCurrency(s)
	if strings.HasSuffix(s, "%") {
		if w.currency != "" {
			return w, false
		}
		w.percent, s = true, strings.TrimSpace(s[:len(s)-1])
	}
	if !w.paren && len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' && w.currency != "" {
		w.paren, s = true, strings.TrimSpace(s[1:len(s)-1]) // $(45.00)
	}
	if strings.HasPrefix(s, "-") && !neg && !w.paren && w.currency != "" {
		s = s[1:] // $-12.50
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return w, false
	}
	mant, exp, hasExp := cutExponent(s)
	e := 0
	if hasExp {
		var ok bool
		if e, ok = smallInt(exp); !ok || strings.ContainsRune(mant, ',') {
			return w, false
		}
		w.sci, s = true, mant
	}
	intPart, frac, point := strings.Cut(s, ".")
	if point && !isDigits(frac) {
		return w, false
	}
	w.point = point
	if strings.ContainsRune(intPart, ',') {
		groups := strings.Split(intPart, ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 || groups[0][0] == '0' || !isDigits(groups[0]) {
			return w, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 || !isDigits(g) {
				return w, false
			}
		}
		w.grouped = true
		w.ambiguous = len(groups) == 2 && !point
		intPart = strings.Join(groups, "")
	} else if !isDigits(intPart) {
		return w, false
	}
	w.lead = len(intPart) > 1 && intPart[0] == '0'
	w.intDigits, w.scale = len(intPart), len(frac)
	w.sig = len(strings.TrimLeft(intPart+frac, "0"))
	if w.sci {
		w.shift(e)
	}
	return w, true
}

// shift moves the decimal point of a mantissa by an exponent.
func (w *writtenNumber) shift(e int) {
	w.intDigits = max(w.intDigits+e, 1)
	w.scale = max(w.scale-e, 0)
}

// cutCurrency removes one currency sign or code before or after the number,
// with or without a space.
func cutCurrency(s string) (string, string) {
	for _, c := range currencySigns {
		if rest, ok := strings.CutPrefix(s, c); ok {
			return strings.TrimSpace(rest), c
		}
		if rest, ok := strings.CutSuffix(s, c); ok {
			return strings.TrimSpace(rest), c
		}
	}
	return s, ""
}

func cutExponent(s string) (mant, exp string, ok bool) {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// smallInt reads an exponent: an optional sign and one to three digits,
// within maxExponent.
func smallInt(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if !isDigits(s) || len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	if n > maxExponent {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// written counts a value that is not a plain number but may be one in a
// written form. It returns false when the value is no number at all.
func (c *colStats) written(v string) bool {
	w, ok := readWritten(v)
	if !ok || !w.form() {
		return false
	}
	switch {
	case w.sig > maxSignificant:
		c.long++
		return true
	case w.lead:
		c.lead++
		return true
	}
	c.forms++
	if w.sci {
		c.sci++
	}
	if w.grouped {
		c.grouped++
	}
	if w.ambiguous {
		c.ambiguous++
	}
	if w.point {
		c.points++
	}
	if w.percent {
		c.percent++
	}
	if w.paren {
		c.paren++
	}
	if w.currency != "" {
		if c.currencies == nil {
			c.currencies = map[string]int64{}
		}
		c.currencies[w.currency]++
	}
	c.intDigits = max(c.intDigits, int64(w.intDigits))
	c.scale = max(c.scale, int64(w.scale))
	return true
}

// writtenForm is what the cast of a column in a written form removes.
type writtenForm struct {
	currency string
	percent  bool
	paren    bool
	grouped  bool
	sci      bool
}

// decideWritten decides a column whose values are all numbers, some of them
// in a written form: a number when the form is one and unambiguous, else
// text with the reason.
func decideWritten(c map[string]int64, n int64) decision {
	var signs []string
	for _, s := range currencySigns {
		if c["cur:"+s] > 0 {
			signs = append(signs, s)
		}
	}
	switch {
	case len(signs) > 1:
		return decision{typ: TypeText, reason: "text: the values are in more than one currency (" + strings.Join(signs, ", ") + ")"}
	case c["pct"] > 0 && c["pct"] < n:
		return decision{typ: TypeText, reason: fmt.Sprintf("text: %d of %d values have a percent sign and the others do not", c["pct"], n)}
	case c["grouped"] > 0 && c["ambiguous"] == c["grouped"] && c["dec"]+c["point"] == 0:
		return decision{typ: TypeText, reason: "text: " + plural(c["ambiguous"], "value like 1,234 could be", "values like 1,234 could be") +
			" a thousands separator or a decimal comma (1234 or 1.234)"}
	}
	f := writtenForm{percent: c["pct"] > 0, paren: c["paren"] > 0, grouped: c["grouped"] > 0, sci: c["sci"] > 0}
	if len(signs) == 1 {
		f.currency = signs[0]
	}
	intDigits, scale := c["intdigits"], c["scale"]
	if f.percent {
		// Percentages are stored as fractions, as spreadsheets store them:
		// 12.5% is 0.125.
		intDigits, scale = max(intDigits-2, 1), scale+2
	}
	d := decision{written: &f}
	switch {
	case scale == 0 && !f.sci && intDigits <= 18:
		d.typ = TypeInteger
	case scale > 0 && intDigits+scale <= 18:
		d.typ, d.sqlType = TypeDecimal, fmt.Sprintf("DECIMAL(18,%d)", scale)
	default:
		d.typ = TypeDouble
	}
	d.reason = fmt.Sprintf("%s: %s written like %s", d.typ, plural(c["form"], "value", "values"), f.example(scale > 0))
	if dropped := f.dropped(); dropped != "" {
		d.reason += "; " + dropped
	}
	return d
}

// example shows the form, as a person would recognise it.
func (f writtenForm) example(fraction bool) string {
	num := "1234"
	if f.grouped {
		num = "1,234"
	}
	if fraction || f.percent {
		num += ".56"
	}
	switch {
	case f.sci:
		num = "1.2e-05"
		if f.grouped {
			num = "1,234.56 and 1.2e-05"
		}
	case f.percent:
		num = "12.5%"
		if f.grouped {
			num = "1,234.5%"
		}
	}
	if f.currency != "" {
		if len(f.currency) == 3 {
			num = f.currency + " " + num
		} else {
			num = f.currency + num
		}
	}
	if f.paren {
		num += " and (" + strings.TrimPrefix(num, f.currency) + ")"
	}
	return num
}

// dropped says what reading the form removed.
func (f writtenForm) dropped() string {
	var parts []string
	if f.currency != "" {
		parts = append(parts, "the currency sign "+f.currency)
	}
	if f.grouped {
		parts = append(parts, "thousands separators")
	}
	var out string
	if len(parts) > 0 {
		out = strings.Join(parts, " and ") + " were dropped"
		if len(parts) == 1 && !f.grouped {
			out = parts[0] + " was dropped"
		}
	}
	add := func(s string) {
		if out != "" {
			out += "; "
		}
		out += s
	}
	if f.paren {
		add("values in parentheses are negative")
	}
	if f.percent {
		add("percentages are stored as fractions (12.5% is 0.125)")
	}
	if f.sci {
		add("scientific notation was read as numbers")
	}
	return out
}

// cleanSQL returns the SQL that turns trimmed text v in the form into a
// plain number's text. Only constants from currencySigns go into it.
func (f writtenForm) cleanSQL(v string) string {
	out := v
	if f.currency != "" {
		out = "replace(" + out + ", " + quoteString(f.currency) + ", '')"
	}
	if f.grouped {
		out = "replace(" + out + ", ',', '')"
	}
	if f.percent {
		out = "replace(" + out + ", '%', '')"
	}
	if f.paren {
		out = "(CASE WHEN contains(" + v + ", '(') THEN '-' ELSE '' END || replace(replace(" + out + ", '(', ''), ')', ''))"
	}
	if f.currency != "" || f.paren {
		out = "replace(" + out + ", ' ', '')"
	}
	return out
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
