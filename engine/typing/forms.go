package typing

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Numbers as people write them: with thousands separators, a currency sign
// or ISO code before or after, a percent sign, accounting parentheses for
// negatives, or in scientific notation. A column becomes numeric only when
// every value reads as a number in one unambiguous form; what was dropped
// to read it is named in the import report.

// CurrencySigns are the signs and ISO 4217 codes read as a currency; one
// column may use only one of them.
var CurrencySigns = []string{
	"$", "€", "£", "¥",
	"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "HKD", "SGD", "SEK", "NOK", "DKK",
	"PLN", "CZK", "HUF", "INR", "BRL", "MXN", "ZAR", "KRW", "TRY", "ILS", "AED", "SAR",
}

// IsoCode reports whether a currency is an ISO code rather than a sign.
func IsoCode(c string) bool { return len(c) == 3 && c[0] >= 'A' && c[0] <= 'Z' }

// MaxExponent keeps scientific notation within a double's range.
const MaxExponent = 300

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

// WrittenPattern is the grammar of a number in a written form; the same
// pattern (RE2, as Go and DuckDB both speak it) reads values in Go and in
// the SQL pass, and WrittenParts names its groups. The checks in
// readWritten, mirrored in writtenSQL, then refuse what the pattern lets
// through: unbalanced parentheses, two signs, two currencies, a currency
// with a percent sign, exponents beyond maxExponent.
var (
	WrittenPattern = `^(\()? *(-)? *(` + currencyAlternatives() + `)? *(\()? *(-)?([0-9]+|[1-9][0-9]{0,2}(?:,[0-9]{3})+)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]{1,3}))? *(` +
		currencyAlternatives() + `)? *(%)? *(\))?$`
	WrittenParts = []string{"lp", "m1", "cp", "lp2", "m2", "int", "frac", "exp", "cs", "pct", "rp"}
	writtenRE    = regexp.MustCompile(WrittenPattern)
)

func currencyAlternatives() string {
	alts := make([]string, len(CurrencySigns))
	for i, c := range CurrencySigns {
		alts[i] = regexp.QuoteMeta(c)
	}
	return strings.Join(alts, "|")
}

// mayBeWritten is a cheap test that rules out most text before the pattern
// runs: a written number starts with a digit, a sign, a parenthesis or a
// currency. One that starts with a digit has a minus sign only in its
// exponent, and no '/' or ':', which rules out dates and times.
func mayBeWritten(v string) bool {
	switch b := v[0]; {
	case b >= '0' && b <= '9':
		if i := strings.IndexByte(v, '-'); i > 0 && v[i-1] != 'e' && v[i-1] != 'E' {
			return false
		}
		return !strings.ContainsAny(v, "/:")
	case b == '-', b == '(', b == '$':
		return true
	case b >= 'A' && b <= 'Z':
		return len(v) >= 3 && slices.Contains(CurrencySigns, v[:3])
	}
	return strings.HasPrefix(v, "€") || strings.HasPrefix(v, "£") || strings.HasPrefix(v, "¥")
}

// readWritten reads v (trimmed, not empty) as a number in a written form.
// Plain numbers read too (form() is then false).
func readWritten(v string) (writtenNumber, bool) {
	var w writtenNumber
	if !mayBeWritten(v) {
		return w, false
	}
	m := writtenRE.FindStringSubmatch(v)
	if m == nil {
		return w, false
	}
	g := func(name string) string { return m[1+slices.Index(WrittenParts, name)] }
	lp, lp2, rp, m1, m2 := g("lp") != "", g("lp2") != "", g("rp") != "", g("m1") != "", g("m2") != ""
	cp, cs, intPart, frac, exp := g("cp"), g("cs"), g("int"), g("frac"), g("exp")
	w.paren, w.percent, w.currency = lp || lp2, g("pct") != "", cp+cs
	switch {
	case lp && lp2, w.paren != rp, lp2 && cp == "",
		cp != "" && cs != "", w.percent && w.currency != "",
		m1 && m2, w.paren && (m1 || m2), m2 && cp == "":
		return w, false
	}
	digits := strings.ReplaceAll(intPart, ",", "")
	w.grouped = digits != intPart
	w.ambiguous = w.grouped && strings.Count(intPart, ",") == 1 && frac == ""
	w.point = frac != ""
	w.lead = len(intPart) > 1 && intPart[0] == '0'
	w.intDigits, w.scale = len(digits), len(frac)
	w.sig = len(strings.TrimLeft(digits+frac, "0"))
	if exp != "" {
		e, ok := smallInt(exp)
		if !ok || w.grouped {
			return w, false
		}
		w.sci = true
		w.intDigits, w.scale = max(w.intDigits+e, 1), max(w.scale-e, 0)
	}
	return w, true
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
	n := atoi(s)
	if n > MaxExponent {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// written counts a value that is not a plain number but may be one in a
// written form. It returns false when the value is no number at all.
func (c *Stats) written(v string) bool {
	w, ok := readWritten(v)
	if !ok || !w.form() {
		return false
	}
	switch {
	case w.sig > maxSignificant:
		c.Long++
		return true
	case w.lead:
		c.Lead++
		return true
	}
	c.Forms++
	if w.sci {
		c.Sci++
	}
	if w.grouped {
		c.Grouped++
	}
	if w.ambiguous {
		c.Ambiguous++
	}
	if w.point {
		c.Points++
	}
	if w.percent {
		c.Percent++
	}
	if w.paren {
		c.Paren++
	}
	if w.currency != "" {
		if c.Currencies == nil {
			c.Currencies = map[string]int64{}
		}
		c.Currencies[w.currency]++
	}
	c.IntDigits = max(c.IntDigits, int64(w.intDigits))
	c.Scale = max(c.Scale, int64(w.scale))
	return true
}

// WrittenForm is what the cast of a column in a written form removes.
type WrittenForm struct {
	Currency string
	Percent  bool
	Paren    bool
	Grouped  bool
	Sci      bool
}

// DecideWritten decides a column whose values are all numbers, some of them
// in a written form: a number when the form is one and unambiguous, else
// text with the reason.
func DecideWritten(c map[string]int64, n int64) Decision {
	var signs []string
	for _, s := range CurrencySigns {
		if c["cur:"+s] > 0 {
			signs = append(signs, s)
		}
	}
	switch {
	case len(signs) > 1:
		return Decision{Type: TypeText, Reason: "text: the values are in more than one currency (" + strings.Join(signs, ", ") + ")"}
	case c["pct"] > 0 && c["pct"] < n:
		return Decision{Type: TypeText, Reason: fmt.Sprintf("text: %d of %d values have a percent sign and the others do not", c["pct"], n)}
	case c["grouped"] > 0 && c["ambiguous"] == c["grouped"] && c["dec"]+c["point"] == 0:
		return Decision{Type: TypeText, Reason: "text: " + plural(c["ambiguous"], "value like 1,234 could be", "values like 1,234 could be") +
			" a thousands separator or a decimal comma (1234 or 1.234)"}
	}
	f := WrittenForm{Percent: c["pct"] > 0, Paren: c["paren"] > 0, Grouped: c["grouped"] > 0, Sci: c["sci"] > 0}
	if len(signs) == 1 {
		f.Currency = signs[0]
	}
	intDigits, scale := c["intdigits"], c["scale"]
	if f.Percent {
		// Percentages are stored as fractions, as spreadsheets store them:
		// 12.5% is 0.125.
		intDigits, scale = max(intDigits-2, 1), scale+2
	}
	d := Decision{Written: &f}
	switch {
	case scale == 0 && !f.Sci && intDigits <= 18:
		d.Type = TypeInteger
	case scale > 0 && intDigits+scale <= 18:
		d.Type, d.SQLType = TypeDecimal, fmt.Sprintf("DECIMAL(18,%d)", scale)
	default:
		d.Type = TypeDouble
	}
	d.Reason = fmt.Sprintf("%s: %s written like %s", d.Type, plural(c["form"], "value", "values"), f.example(scale > 0))
	if dropped := f.dropped(); dropped != "" {
		d.Reason += "; " + dropped
	}
	return d
}

// example shows the form, as a person would recognise it.
func (f WrittenForm) example(fraction bool) string {
	num := "1234"
	if f.Grouped {
		num = "1,234"
	}
	if fraction || f.Percent {
		num += ".56"
	}
	switch {
	case f.Sci:
		num = "1.2e-05"
		if f.Grouped {
			num = "1,234.56 and 1.2e-05"
		}
	case f.Percent:
		num = "12.5%"
		if f.Grouped {
			num = "1,234.5%"
		}
	}
	if f.Currency != "" {
		if IsoCode(f.Currency) {
			num = f.Currency + " " + num
		} else {
			num = f.Currency + num
		}
	}
	if f.Paren {
		num += " and (" + strings.TrimPrefix(num, f.Currency) + ")"
	}
	return num
}

// dropped says what reading the form removed.
func (f WrittenForm) dropped() string {
	var parts []string
	if f.Currency != "" {
		parts = append(parts, "the currency sign "+f.Currency)
	}
	if f.Grouped {
		parts = append(parts, "thousands separators")
	}
	var out string
	if len(parts) > 0 {
		out = strings.Join(parts, " and ") + " were dropped"
		if len(parts) == 1 && !f.Grouped {
			out = parts[0] + " was dropped"
		}
	}
	add := func(s string) {
		if out != "" {
			out += "; "
		}
		out += s
	}
	if f.Paren {
		add("values in parentheses are negative")
	}
	if f.Percent {
		add("percentages are stored as fractions (12.5% is 0.125)")
	}
	if f.Sci {
		add("scientific notation was read as numbers")
	}
	return out
}
