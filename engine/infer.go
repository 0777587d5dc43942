package engine

import (
	"context"
	"database/sql"
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

// identifierWords mark, in a column's key, that its digits are codes and not
// quantities: a postcode column of 12345-style values stays text.
var identifierWords = map[string]bool{
	"id": true, "ids": true, "zip": true, "zipcode": true, "postcode": true, "postal": true, "plz": true,
	"phone": true, "tel": true, "telephone": true, "fax": true, "mobile": true, "cell": true,
	"sku": true, "ean": true, "upc": true, "gtin": true, "isbn": true, "iban": true, "account": true,
	"ssn": true, "code": true, "number": false,
}

// The probes count, over every value of a column, how many match each shape.
// Each is a fixed SQL template over the column's trimmed value {v}; none holds
// anything from the file.
type probe struct {
	name string
	sql  string
}

var probes = []probe{
	{"n", `count({v})`},
	{"int", `count({v}) FILTER (WHERE regexp_full_match({v}, '0|-?[1-9][0-9]{0,14}'))`},
	{"dec", `count({v}) FILTER (WHERE regexp_full_match({v}, '-?(0|[1-9][0-9]*)\.[0-9]+') AND length(ltrim(replace(ltrim({v}, '-'), '.', ''), '0')) <= 15)`},
	{"intdigits", `coalesce(max(length(split_part(ltrim({v}, '-'), '.', 1))) FILTER (WHERE regexp_full_match({v}, '-?(0|[1-9][0-9]*)(\.[0-9]+)?')), 0)`},
	{"scale", `coalesce(max(length(split_part({v}, '.', 2))) FILTER (WHERE regexp_full_match({v}, '-?(0|[1-9][0-9]*)\.[0-9]+')), 0)`},
	{"lead", `count({v}) FILTER (WHERE regexp_full_match({v}, '[-+]?0[0-9]+(\.[0-9]*)?'))`},
	{"long", `count({v}) FILTER (WHERE regexp_full_match({v}, '[-+]?[0-9]*\.?[0-9]*') AND length(ltrim(regexp_replace({v}, '[^0-9]', '', 'g'), '0')) > 15)`},
	{"bool", `count({v}) FILTER (WHERE lower({v}) IN ('true', 'false'))`},
	{"date", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]{4}-[0-9]{2}-[0-9]{2}') AND TRY_CAST({v} AS DATE) IS NOT NULL)`},
	{"ts", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?') AND TRY_CAST({v} AS TIMESTAMP) IS NOT NULL)`},
	{"dmy", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}') AND try_strptime({v}, '%d/%m/%Y') IS NOT NULL)`},
	{"mdy", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}') AND try_strptime({v}, '%m/%d/%Y') IS NOT NULL)`},
	{"dmydot", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{4}') AND try_strptime({v}, '%d.%m.%Y') IS NOT NULL)`},
	{"ymdslash", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}') AND try_strptime({v}, '%Y/%m/%d') IS NOT NULL)`},
	{"serial", `count({v}) FILTER (WHERE regexp_full_match({v}, '-?[0-9]+(\.[0-9]+)?([eE]-?[0-9]+)?') AND TRY_CAST({v} AS DOUBLE) BETWEEN 0 AND 2958465)`},
	{"serialint", `count({v}) FILTER (WHERE regexp_full_match({v}, '[0-9]+'))`},
	{"digitish", `count({v}) FILTER (WHERE regexp_full_match({v}, '\+?[(]?[0-9][0-9 ()./-]*'))`},
}

// decision is the type chosen for one column, and how to cast its text.
type decision struct {
	typ        string
	sqlType    string // for decimals: DECIMAL(18,s)
	format     string // strptime format for day/month forms
	serial1904 bool
	identifier bool
	reason     string
}

// infer decides each column's type from every value in the staging table:
// one scan computes the probes for all columns.
func (s *Store) infer(ctx context.Context, conn *sql.Conn, stage string, keys, labels []string, hints []Hint) ([]decision, error) {
	var q strings.Builder
	q.WriteString(`SELECT `)
	for i := range keys {
		for j, p := range probes {
			if i > 0 || j > 0 {
				q.WriteString(", ")
			}
			// Each probe reads v; bind it to this column's trimmed text.
			q.WriteString(strings.ReplaceAll(p.sql, "{v}", "c"+strconv.Itoa(i+1)))
		}
	}
	q.WriteString(` FROM (SELECT `)
	for i := range keys {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "NULLIF(trim(r[%d]), '') AS c%d", i+1, i+1)
	}
	q.WriteString(` FROM ` + quoteIdent(stage) + `)`)

	counts := make([]int64, len(keys)*len(probes))
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := conn.QueryRowContext(ctx, q.String()).Scan(dest...); err != nil {
		return nil, classify(ctx, err)
	}
	out := make([]decision, len(keys))
	for i := range keys {
		c := map[string]int64{}
		for j, p := range probes {
			c[p.name] = counts[i*len(probes)+j]
		}
		out[i] = decide(c, keys[i], hints[i])
	}
	return out, nil
}

func hasIdentifierWord(key string) bool {
	for _, w := range strings.Split(key, "_") {
		if identifierWords[w] {
			return true
		}
	}
	return false
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
func decide(c map[string]int64, key string, h Hint) decision {
	n := c["n"]
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
			if p := c["intdigits"] + c["scale"]; p <= 18 && c["scale"] > 0 {
				return decision{typ: TypeDecimal, sqlType: fmt.Sprintf("DECIMAL(18,%d)", c["scale"]),
					reason: fmt.Sprintf("decimal: all %d values are numbers with up to %d decimal places", n, c["scale"])}
			}
			return decision{typ: TypeDouble, reason: fmt.Sprintf("double: all %d values are numbers of at most 15 significant digits", n)}
		}
	}
	switch {
	case all("date"):
		return decision{typ: TypeDate, reason: fmt.Sprintf("date: all %d values are ISO dates", n)}
	case all("ts"):
		return decision{typ: TypeTimestamp, reason: fmt.Sprintf("timestamp: all %d values are ISO dates and times", n)}
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
	d := decision{typ: TypeText, identifier: nameID || all("digitish") && c["int"] < n}
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

// expr returns the SQL that turns staging column i (1-based) into the
// decided type. Only constants and the column's position go into it.
func (d decision) expr(i int) string {
	raw := fmt.Sprintf("r[%d]", i)
	v := fmt.Sprintf("NULLIF(trim(r[%d]), '')", i)
	switch d.typ {
	case TypeInteger:
		return "CAST(" + v + " AS BIGINT)"
	case TypeDecimal:
		return "CAST(" + v + " AS " + d.sqlType + ")"
	case TypeDouble:
		return "CAST(" + v + " AS DOUBLE)"
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
		return "CAST(" + v + " AS TIMESTAMP)"
	}
	return "NULLIF(" + raw + ", '')"
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
