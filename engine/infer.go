package engine

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

// decimalType is the DECIMAL that holds numbers of up to intDigits whole
// digits and scale decimals exactly, so 1.50 keeps its two places:
// DECIMAL(18,s), kept in 64 bits, when they fit, else DECIMAL(38,s). ok is
// false for whole numbers (scale 0) and past 38 digits.
func decimalType(intDigits, scale int64) (sqlType string, ok bool) {
	switch p := intDigits + scale; {
	case scale == 0 || p > 38:
		return "", false
	case p <= 18:
		return fmt.Sprintf("DECIMAL(18,%d)", scale), true
	}
	return fmt.Sprintf("DECIMAL(38,%d)", scale), true
}

// decision is the type chosen for one column, and how to cast its text.
type decision struct {
	typ        string
	sqlType    string // for decimals: DECIMAL(18,s) or DECIMAL(38,s)
	format     string // strptime format for day/month forms
	serial1904 bool
	identifier bool
	reason     string
	// written, for numbers in a written form, says what the cast drops.
	written *writtenForm
	// utc marks timestamps with a zone, converted to UTC.
	utc bool
	// keepEmpty keeps empty text apart from an empty cell, for sources
	// that tell them apart.
	keepEmpty bool
	// trimmed: the values need no trim before the cast.
	trimmed bool
}

func hasIdentifierWord(key string) bool {
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

// decide picks a type from a column's probe counts. A column is numeric only
// if every value is a number in canonical form that survives the round trip;
// everything else keeps its text.
func decide(st *colStats, key string, h Hint) decision {
	c := st.counts()
	n := c["n"]
	if h.Type != "" {
		return forced(c, key, h.Type)
	}
	if n == 0 {
		return decision{typ: TypeText, reason: "text: the column has no values"}
	}
	all := func(k string) bool { return c[k] == n }
	nameID := hasIdentifierWord(key)

	if h.DateSerial && all("serial") {
		if all("serialint") {
			return decision{typ: TypeDate, serial1904: h.Date1904, reason: "date: spreadsheet day numbers with a date format"}
		}
		return decision{typ: TypeTimestamp, serial1904: h.Date1904, reason: "timestamp: spreadsheet day numbers with a date-time format"}
	}
	if !h.NoNumbers {
		switch {
		case all("bool"):
			return decision{typ: TypeBoolean, reason: fmt.Sprintf("boolean: all %d values are true or false", n)}
		case c["lead"] > 0:
			return decision{typ: TypeText, identifier: true, reason: "text: " + plural(c["lead"], "value has a leading zero", "values with leading zeros")}
		case c["long"] > 0:
			return decision{typ: TypeText, identifier: true, reason: "text: " + plural(c["long"], "value has", "values have") + " more than 15 significant digits"}
		case all("int") && nameID:
			return decision{typ: TypeText, identifier: true, reason: fmt.Sprintf("text: whole numbers in a column named %q are identifiers", key)}
		case all("int"):
			return decision{typ: TypeInteger, reason: fmt.Sprintf("integer: all %d values are whole numbers", n)}
		case c["int"]+c["dec"] == n:
			if sqlType, ok := decimalType(c["intdigits"], c["scale"]); ok {
				return decision{typ: TypeDecimal, sqlType: sqlType,
					reason: fmt.Sprintf("decimal: all %d values are numbers with up to %d decimal places", n, c["scale"])}
			}
			return decision{typ: TypeDouble, reason: fmt.Sprintf("double: all %d values are numbers of at most 15 significant digits", n)}
		case c["int"]+c["dec"]+c["form"] == n && nameID:
			return decision{typ: TypeText, identifier: true, reason: fmt.Sprintf("text: numbers in a column named %q are identifiers", key)}
		case c["int"]+c["dec"]+c["form"] == n:
			return decideWritten(c, n)
		}
	}
	switch {
	case all("date"):
		return decision{typ: TypeDate, reason: fmt.Sprintf("date: all %d values are ISO dates", n)}
	case all("ts"):
		return decision{typ: TypeTimestamp, reason: fmt.Sprintf("timestamp: all %d values are ISO dates and times", n)}
	case all("tsz"):
		return decision{typ: TypeTimestamp, utc: true, reason: fmt.Sprintf("timestamp: all %d values are ISO dates and times with a time zone; they are stored in UTC", n)}
	case c["tsz"] > 0 && c["tsz"]+c["ts"] == n:
		return decision{typ: TypeText, reason: fmt.Sprintf("text: %d of %d dates and times have a time zone and the others do not", c["tsz"], n)}
	case all("dmy") && all("mdy"):
		return decision{typ: TypeText, reason: "text: dates whose day and month order cannot be told apart"}
	case all("dmy"):
		return decision{typ: TypeDate, format: "%d/%m/%Y", reason: "date: all values are day/month/year"}
	case all("mdy"):
		return decision{typ: TypeDate, format: "%m/%d/%Y", reason: "date: all values are month/day/year"}
	case all("dmydot"):
		return decision{typ: TypeDate, format: "%d.%m.%Y", reason: "date: all values are day.month.year"}
	case all("ymdslash"):
		return decision{typ: TypeDate, format: "%Y/%m/%d", reason: "date: all values are year/month/day"}
	}
	// Dates in a day/month order that cannot be told apart are still
	// dates to a reader, never codes.
	d := decision{typ: TypeText, identifier: nameID || all("digitish") && c["int"] < n && !all("dateish")}
	switch {
	case h.NoNumbers:
		d.reason = "text: the file stores these values as text"
	case c["lead"] > 0:
		d.identifier = true
		d.reason = "text: " + plural(c["lead"], "value has a leading zero", "values with leading zeros")
	case c["long"] > 0:
		d.identifier = true
		d.reason = "text: " + plural(c["long"], "value has", "values have") + " more than 15 significant digits"
	case c["int"]+c["dec"] > 0:
		d.reason = fmt.Sprintf("text: %d of %d values are not numbers", n-c["int"]-c["dec"], n)
	case d.identifier:
		d.reason = "text: codes or phone numbers"
	default:
		d.reason = "text"
	}
	return d
}

// DecideColumn decides a column's type from its values the way ingest does,
// for callers that hold the values themselves. It returns the type, whether
// the column holds identifiers, and the reason.
func DecideColumn(key string, values []string, h Hint) (typ string, identifier bool, reason string) {
	var st colStats
	for _, v := range values {
		st.add(v)
	}
	d := decide(&st, key, h)
	return d.typ, d.identifier, d.reason
}

// forced returns the decision for a declared type. The caller has checked
// that every value reads as it; what is checked here picks the exact form.
func forced(c map[string]int64, key, typ string) decision {
	n := c["n"]
	reason := "declared " + typ
	switch typ {
	case TypeInteger:
		return decision{typ: TypeInteger, reason: reason}
	case TypeDecimal, TypeDouble:
		if sqlType, ok := decimalType(c["intdigits"], c["scale"]); ok && c["int"]+c["dec"] == n {
			return decision{typ: TypeDecimal, sqlType: sqlType, reason: reason}
		}
		if c["int"] == n {
			return decision{typ: TypeInteger, reason: reason}
		}
		// Numbers in a written form (1.5e-19) are typed as ingest types
		// them, so that a declared column and the same values uploaded
		// again agree.
		if c["form"] > 0 && c["int"]+c["dec"]+c["form"] == n {
			if d := decideWritten(c, n); d.typ == TypeDecimal || d.typ == TypeDouble {
				d.reason = reason
				return d
			}
		}
		return decision{typ: TypeDouble, reason: reason}
	case TypeBoolean:
		return decision{typ: TypeBoolean, reason: reason}
	case TypeDate:
		return decision{typ: TypeDate, reason: reason}
	case TypeTimestamp:
		return decision{typ: TypeTimestamp, reason: reason}
	}
	return decision{typ: TypeText, identifier: hasIdentifierWord(key) || c["lead"] > 0 || c["long"] > 0, reason: reason}
}

// expr returns the SQL that turns staging column i (1-based) into the
// decided type. Only constants and the column's position go into it.
func (d decision) expr(i int) string { return d.exprOf(stageColumn(i)) }

// exprOf returns the SQL that turns text column raw into the decided type.
func (d decision) exprOf(raw string) string {
	v := "NULLIF(" + trimSQL(raw) + ", '')"
	if d.trimmed {
		v = "NULLIF(" + raw + ", '')"
	}
	switch d.typ {
	case TypeInteger, TypeDecimal, TypeDouble:
		return d.numberExpr(v)
	case TypeBoolean:
		return "CAST(lower(" + v + ") AS BOOLEAN)"
	case TypeDate:
		switch {
		case d.format != "":
			return "CAST(strptime(" + v + ", '" + d.format + "') AS DATE)"
		case strings.HasPrefix(d.reason, "date: spreadsheet"):
			return serialDate(v, d.serial1904)
		}
		return "CAST(" + v + " AS DATE)"
	case TypeTimestamp:
		if strings.HasPrefix(d.reason, "timestamp: spreadsheet") {
			return serialTimestamp(v, d.serial1904)
		}
		if d.utc {
			return "timezone('UTC', CAST(" + v + " AS TIMESTAMPTZ))"
		}
		return "CAST(" + v + " AS TIMESTAMP)"
	}
	if d.keepEmpty {
		return raw
	}
	return "NULLIF(" + raw + ", '')"
}

// numberExpr casts trimmed text v to the decided numeric type, through the
// written form's cleaning when there is one.
func (d decision) numberExpr(v string) string {
	sqlType := map[string]string{TypeInteger: "BIGINT", TypeDecimal: d.sqlType, TypeDouble: "DOUBLE"}[d.typ]
	if d.written == nil {
		return "CAST(" + v + " AS " + sqlType + ")"
	}
	clean := d.written.cleanSQL(v)
	if !d.written.percent {
		return "CAST(" + clean + " AS " + sqlType + ")"
	}
	if d.typ == TypeDecimal {
		// Exact: the percentage at the final scale, times 0.01.
		wide := strings.Replace(d.sqlType, "DECIMAL(18,", "DECIMAL(38,", 1)
		return "CAST(CAST(" + clean + " AS " + wide + ") * 0.01 AS " + d.sqlType + ")"
	}
	return "(CAST(" + clean + " AS DOUBLE) / 100)"
}

// Spreadsheet day numbers count from 1899-12-30 (day 1 is 1900-01-01, and
// Lotus's phantom 1900-02-29 is day 60, so days before it start a day later)
// or, in the 1904 system, from 1904-01-01.
func serialDate(v string, date1904 bool) string {
	if date1904 {
		return "(DATE '1904-01-01' + CAST(floor(CAST(" + v + " AS DOUBLE)) AS INTEGER))"
	}
	return "(CASE WHEN CAST(" + v + " AS DOUBLE) < 61 THEN DATE '1899-12-31' ELSE DATE '1899-12-30' END + CAST(floor(CAST(" + v + " AS DOUBLE)) AS INTEGER))"
}

func serialTimestamp(v string, date1904 bool) string {
	base := "CASE WHEN CAST(" + v + " AS DOUBLE) < 61 THEN TIMESTAMP '1899-12-31' ELSE TIMESTAMP '1899-12-30' END"
	if date1904 {
		base = "TIMESTAMP '1904-01-01'"
	}
	return "(" + base + " + to_microseconds(CAST(round(CAST(" + v + " AS DOUBLE) * 86400000000) AS BIGINT)))"
}
