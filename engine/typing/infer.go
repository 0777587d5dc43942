package typing

import (
	"fmt"
	"strconv"
	"strings"
)

// Column types as the catalog names them.
const (
	TypeText      = "text"
	TypeInteger   = "integer"
	TypeDecimal   = "decimal"
	TypeDouble    = "double"
	TypeBoolean   = "boolean"
	TypeDate      = "date"
	TypeTimestamp = "timestamp"
	// TypeTime is a time of day, from spreadsheet cells that hold one.
	TypeTime = "time"
)

// maxSignificant is the most significant digits a number may have and still
// be stored as a number: beyond 15, a double no longer round-trips and a
// value is far more likely an identifier (card, account, order number).
const maxSignificant = 15

// identifierWords mark, anywhere in a column's key, that its digits are
// codes and not quantities: a postcode column of 12345-style values stays
// text. identifierLast mark it only as the key's last word: "order_number"
// and "zip_code" are codes, "number_of_items" and "code_count" are not.
var (
	identifierWords = map[string]bool{
		"id": true, "ids": true, "zip": true, "zipcode": true, "postcode": true, "postal": true, "plz": true,
		"phone": true, "tel": true, "telephone": true, "fax": true, "mobile": true,
		"sku": true, "ean": true, "upc": true, "gtin": true, "isbn": true, "iban": true, "ssn": true,
	}
	identifierLast = map[string]bool{"code": true, "account": true, "number": true, "no": true, "nr": true}
)

// DecimalType is the DECIMAL that holds numbers of up to intDigits whole
// digits and scale decimals exactly, so 1.50 keeps its two places:
// DECIMAL(18,s), kept in 64 bits, when they fit, else DECIMAL(38,s). ok is
// false for whole numbers (scale 0) and past 38 digits.
func DecimalType(intDigits, scale int64) (sqlType string, ok bool) {
	switch p := intDigits + scale; {
	case scale == 0 || p > 38:
		return "", false
	case p <= 18:
		return fmt.Sprintf("DECIMAL(18,%d)", scale), true
	}
	return fmt.Sprintf("DECIMAL(38,%d)", scale), true
}

// Decision is the type chosen for one column, and how to cast its text.
type Decision struct {
	Type       string
	SQLType    string // for decimals: DECIMAL(18,s) or DECIMAL(38,s)
	Format     string // strptime format for day/month forms
	Serial1904 bool
	Identifier bool
	Reason     string
	// Written, for numbers in a Written form, says what the cast drops.
	Written *WrittenForm
	// UTC marks timestamps with a zone, converted to UTC.
	UTC bool
	// KeepEmpty keeps empty text apart from an empty cell, for sources
	// that tell them apart.
	KeepEmpty bool
	// Trimmed: the values need no trim before the cast.
	Trimmed bool
	// Numberish marks a text column whose values are mostly numbers, with
	// the rest possibly marks of missing values or numbers of more digits
	// than the counts take: the engine reads it again (engine/refine.go).
	Numberish bool
	// Blank and Padded are the column's Stats of cells of only spaces
	// (stored empty) and of values with spaces around them (stored
	// trimmed), for the import report.
	Blank, Padded int64
}

// MissingMarks are the texts that public statistics write in a cell of
// numbers whose value is missing, compared without regard to case. A
// column of numbers with such cells is numeric, those cells empty.
var MissingMarks = []string{"..", "...", "-", "–", "—", "n/a", "na", "(na)", "#n/a", "null", "none", "n.a.",
	// Statistics offices' marks of a value withheld or not available.
	"x", ":", "[x]", "[c]", "[z]", "[u]", "[w]", "[low]"}

// MissingMark reports whether v is one of MissingMarks.
func MissingMark(v string) bool {
	l := strings.ToLower(strings.TrimSpace(v))
	for _, m := range MissingMarks {
		if l == m {
			return true
		}
	}
	return false
}

// HasIdentifierWord reports whether a column key names identifiers (id,
// zip, phone, sku and their kin anywhere; code or number as its last
// word), whose digits are never a quantity.
func HasIdentifierWord(key string) bool {
	words := strings.Split(key, "_")
	for _, w := range words {
		if identifierWords[w] {
			return true
		}
	}
	return identifierLast[words[len(words)-1]]
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Decide picks a type from a column's probe counts. A column is numeric only
// if every value is a number in canonical form that survives the round trip;
// everything else keeps its text.
func Decide(st *Stats, key string, h Hint) Decision {
	c := st.Counts()
	n := c["n"]
	if h.Type != "" {
		return Forced(c, key, h.Type)
	}
	if n == 0 {
		return Decision{Type: TypeText, Reason: "text: the column has no values"}
	}
	all := func(k string) bool { return c[k] == n }
	nameID := HasIdentifierWord(key)

	if h.DateSerial && all("serial") {
		if all("serialint") {
			return Decision{Type: TypeDate, Serial1904: h.Date1904, Reason: "date: spreadsheet day numbers with a date format"}
		}
		return Decision{Type: TypeTimestamp, Serial1904: h.Date1904, Reason: "timestamp: spreadsheet day numbers with a date-time format"}
	}
	if !h.NoNumbers {
		switch {
		case all("bool"):
			return Decision{Type: TypeBoolean, Reason: fmt.Sprintf("boolean: all %d values are true or false", n)}
		case c["lead"] > 0:
			return Decision{Type: TypeText, Identifier: true, Reason: "text: " + plural(c["lead"], "value has a leading zero", "values with leading zeros")}
		case c["long"] > 0:
			// Decimals are never identifiers: past 15 digits, a value
			// with a point is a number a program printed.
			numbers := c["int"] + c["dec"] + c["long"] + c["form"]
			return Decision{Type: TypeText, Identifier: nameID || c["long"] > c["longpoint"], Reason: "text: " + plural(c["long"], "value has", "values have") + " more than 15 significant digits",
				Numberish: !nameID && n-numbers < numbers}
		case all("int") && nameID:
			return Decision{Type: TypeText, Identifier: true, Reason: fmt.Sprintf("text: whole numbers in a column named %q are identifiers", key)}
		case all("int"):
			return Decision{Type: TypeInteger, Reason: fmt.Sprintf("integer: all %d values are whole numbers", n)}
		case c["int"]+c["dec"] == n:
			if sqlType, ok := DecimalType(c["intdigits"], c["scale"]); ok {
				return Decision{Type: TypeDecimal, SQLType: sqlType,
					Reason: fmt.Sprintf("decimal: all %d values are numbers with up to %d decimal places", n, c["scale"])}
			}
			return Decision{Type: TypeDouble, Reason: fmt.Sprintf("double: all %d values are numbers of at most 15 significant digits", n)}
		case c["int"]+c["dec"]+c["form"] == n && nameID:
			return Decision{Type: TypeText, Identifier: true, Reason: fmt.Sprintf("text: numbers in a column named %q are identifiers", key)}
		case c["int"]+c["dec"]+c["form"] == n:
			return DecideWritten(c, n)
		}
	}
	switch {
	case all("date"):
		return Decision{Type: TypeDate, Reason: fmt.Sprintf("date: all %d values are ISO dates", n)}
	case all("ts"):
		return Decision{Type: TypeTimestamp, Reason: fmt.Sprintf("timestamp: all %d values are ISO dates and times", n)}
	case all("tsz"):
		return Decision{Type: TypeTimestamp, UTC: true, Reason: fmt.Sprintf("timestamp: all %d values are ISO dates and times with a time zone; they are stored in UTC", n)}
	case c["tsz"] > 0 && c["tsz"]+c["ts"] == n:
		return Decision{Type: TypeText, Reason: fmt.Sprintf("text: %d of %d dates and times have a time zone and the others do not", c["tsz"], n)}
	case all("dmy") && all("mdy"):
		return Decision{Type: TypeText, Reason: "text: dates whose day and month order cannot be told apart"}
	case all("dmy"):
		return Decision{Type: TypeDate, Format: "%d/%m/%Y", Reason: "date: all values are day/month/year"}
	case all("mdy"):
		return Decision{Type: TypeDate, Format: "%m/%d/%Y", Reason: "date: all values are month/day/year"}
	case all("dmydot"):
		return Decision{Type: TypeDate, Format: "%d.%m.%Y", Reason: "date: all values are day.month.year"}
	case all("ymdslash"):
		return Decision{Type: TypeDate, Format: "%Y/%m/%d", Reason: "date: all values are year/month/day"}
	case all("ym"):
		return Decision{Type: TypeDate, Format: "%Y-%m", Reason: fmt.Sprintf("date: all %d values are a year and a month (2024-01), each stored as the month's first day", n)}
	}
	// Dates in a day/month order that cannot be told apart are still
	// dates to a reader, never codes.
	d := Decision{Type: TypeText, Identifier: nameID || all("digitish") && c["int"] < n && !all("dateish")}
	numbers := c["int"] + c["dec"] + c["long"] + c["form"]
	d.Numberish = !h.NoNumbers && !nameID && c["lead"] == 0 && numbers > 0 && n-numbers < numbers
	switch {
	case h.NoNumbers:
		d.Reason = "text: the file stores these values as text"
	case c["lead"] > 0:
		d.Identifier = true
		d.Reason = "text: " + plural(c["lead"], "value has a leading zero", "values with leading zeros")
	case c["long"] > 0:
		d.Identifier = true
		d.Reason = "text: " + plural(c["long"], "value has", "values have") + " more than 15 significant digits"
	case c["int"]+c["dec"] > 0:
		d.Reason = fmt.Sprintf("text: %d of %d values are not numbers", n-c["int"]-c["dec"], n)
	case d.Identifier:
		d.Reason = "text: codes or phone numbers"
	default:
		d.Reason = "text"
	}
	return d
}

// DecideColumn decides a column's type from its values the way ingest does,
// for callers that hold the values themselves. It returns the type, whether
// the column holds identifiers, and the reason.
func DecideColumn(key string, values []string, h Hint) (typ string, identifier bool, reason string) {
	var st Stats
	for _, v := range values {
		st.Add(v)
	}
	d := Decide(&st, key, h)
	return d.Type, d.Identifier, d.Reason
}

// Forced returns the decision for a declared type. The caller has checked
// that every value reads as it; what is checked here picks the exact form.
func Forced(c map[string]int64, key, typ string) Decision {
	n := c["n"]
	reason := "declared " + typ
	switch typ {
	case TypeInteger:
		return Decision{Type: TypeInteger, Reason: reason}
	case TypeDecimal, TypeDouble:
		if sqlType, ok := DecimalType(c["intdigits"], c["scale"]); ok && c["int"]+c["dec"] == n {
			return Decision{Type: TypeDecimal, SQLType: sqlType, Reason: reason}
		}
		if c["int"] == n {
			return Decision{Type: TypeInteger, Reason: reason}
		}
		// Numbers in a written form (1.5e-19) are typed as ingest types
		// them, so that a declared column and the same values uploaded
		// again agree.
		if c["form"] > 0 && c["int"]+c["dec"]+c["form"] == n {
			if d := DecideWritten(c, n); d.Type == TypeDecimal || d.Type == TypeDouble {
				d.Reason = reason
				return d
			}
		}
		return Decision{Type: TypeDouble, Reason: reason}
	case TypeBoolean:
		return Decision{Type: TypeBoolean, Reason: reason}
	case TypeDate:
		return Decision{Type: TypeDate, Reason: reason}
	case TypeTimestamp:
		return Decision{Type: TypeTimestamp, Reason: reason}
	case TypeTime:
		return Decision{Type: TypeTime, Reason: reason}
	}
	return Decision{Type: TypeText, Identifier: HasIdentifierWord(key) || c["lead"] > 0 || c["long"] > 0, Reason: reason}
}
