package engine

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// missingMarks are the texts that public statistics write in a cell of
// numbers whose value is missing, compared without regard to case. A
// column of numbers with such cells is numeric, those cells empty.
var missingMarks = []string{"..", "...", "-", "–", "—", "n/a", "na", "(na)", "#n/a", "null", "none"}

func isMissingMark(v string) bool {
	l := strings.ToLower(v)
	for _, m := range missingMarks {
		if l == m {
			return true
		}
	}
	return false
}

// refine reads again each text column of a loaded table that the counts
// found mostly numbers (catalog.Column.Numberish), and makes it numeric
// when every other value is a mark of a missing value, or every number
// survives a type exactly: a number of more than 15 significant digits
// with a point or an exponent is a DOUBLE when it is the shortest text of
// a double (2813571753.8725324), else a DECIMAL when it fits 38 digits.
// Digit strings without a point past 15 digits stay text: they are codes.
// It returns notes for the import report, counting each mark stored
// empty.
func (s *Store) refine(ctx context.Context, conn *sql.Conn, t *catalog.Table) ([]string, error) {
	var notes []string
	for i := range t.Columns {
		c := &t.Columns[i]
		if !c.Numberish || c.Type != typing.TypeText {
			continue
		}
		c.Numberish = false
		r, err := s.readNumbers(ctx, conn, t, c.Key)
		if err != nil {
			return nil, err
		}
		sqlType, typ, ok := r.decide()
		if !ok {
			continue
		}
		k := ducksql.Ident(c.Key)
		var marks []string
		for _, m := range missingMarks {
			marks = append(marks, "'"+strings.ReplaceAll(m, "'", "''")+"'")
		}
		q := `ALTER TABLE data.` + ducksql.Ident(t.ID) + ` ALTER COLUMN ` + k + ` SET DATA TYPE ` + sqlType +
			` USING CASE WHEN lower(` + k + `) IN (` + strings.Join(marks, ", ") + `) THEN NULL ELSE CAST(` + k + ` AS ` + sqlType + `) END`
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, classify(ctx, err)
		}
		c.Type, c.Identifier, c.Reason, c.Trimmed = typ, false, r.reason(typ), 0
		if note := r.marksNote(c.Key); note != "" {
			notes = append(notes, note)
		}
	}
	return notes, nil
}

// numberRead is what a second read of a column found.
type numberRead struct {
	n, long, sci         int64
	other                int64
	inexact              int64
	whole                bool
	intDigits, scale     int
	marks                map[string]int64
	firstOther, inexact1 string
}

// readNumbers reads every value of text column key of t.
func (s *Store) readNumbers(ctx context.Context, conn *sql.Conn, t *catalog.Table, key string) (*numberRead, error) {
	rows, err := conn.QueryContext(ctx, `SELECT `+ducksql.Ident(key)+` FROM data.`+ducksql.Ident(t.ID)+` WHERE `+ducksql.Ident(key)+` IS NOT NULL`)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	r := &numberRead{whole: true, marks: map[string]int64{}}
	var v string
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return nil, classify(ctx, err)
		}
		r.add(v)
		if r.other > 0 {
			// One value neither a number nor a mark keeps the text.
			return r, nil
		}
	}
	return r, classify(ctx, rows.Err())
}

func (r *numberRead) add(v string) {
	if isMissingMark(v) {
		r.marks[v]++
		return
	}
	p, ok := readPlainNumber(v)
	if !ok || p.sig > 15 && !p.point && !p.sci {
		r.other++
		return
	}
	r.n++
	if p.point || p.sci {
		r.whole = false
	}
	r.intDigits, r.scale = max(r.intDigits, p.intDigits), max(r.scale, p.scale)
	if p.sci {
		r.sci++
	}
	if p.sig > 15 || p.sci {
		if p.sig > 15 {
			r.long++
		}
		if !exactDouble(v) {
			if r.inexact == 0 {
				r.inexact1 = v
			}
			r.inexact++
		}
	}
}

// decide is the type the values take, if any.
func (r *numberRead) decide() (sqlType, typ string, ok bool) {
	switch {
	case r.other > 0 || r.n == 0:
		return "", "", false
	case r.long == 0 && r.sci == 0 && r.whole && r.intDigits <= 18:
		return "BIGINT", typing.TypeInteger, true
	case r.long == 0 && r.sci == 0:
		if t, ok := typing.DecimalType(int64(r.intDigits), int64(r.scale)); ok {
			return t, typing.TypeDecimal, true
		}
		return "DOUBLE", typing.TypeDouble, true
	case r.inexact == 0:
		return "DOUBLE", typing.TypeDouble, true
	case r.sci == 0:
		if t, ok := typing.DecimalType(int64(r.intDigits), int64(max(r.scale, 1))); ok {
			return t, typing.TypeDecimal, true
		}
	}
	return "", "", false
}

// reason says why the column is numeric.
func (r *numberRead) reason(typ string) string {
	var b strings.Builder
	switch {
	case typ == typing.TypeDouble && (r.long > 0 || r.sci > 0):
		var kinds []string
		if r.long > 0 {
			kinds = append(kinds, fmt.Sprintf("%d with more than 15 significant digits", r.long))
		}
		if r.sci > 0 {
			kinds = append(kinds, fmt.Sprintf("%d with an exponent", r.sci))
		}
		fmt.Fprintf(&b, "double: all %d values are numbers, each the shortest text of a double (%s), so a double keeps every one exactly",
			r.n, strings.Join(kinds, ", "))
	case typ == typing.TypeDecimal && r.long > 0:
		fmt.Fprintf(&b, "decimal: all %d values are numbers of up to %d digits, %d decimal places; %d are not the shortest text of a double (%s), so a decimal keeps them",
			r.n, r.intDigits+r.scale, r.scale, r.inexact, r.inexact1)
	default:
		fmt.Fprintf(&b, "%s: all %d values are numbers", typ, r.n)
	}
	if m := r.markCount(); m > 0 {
		fmt.Fprintf(&b, "; %d cells marked as missing (%s) are stored empty", m, strings.Join(r.markList(), ", "))
	}
	return b.String()
}

func (r *numberRead) markCount() int64 {
	var n int64
	for _, c := range r.marks {
		n += c
	}
	return n
}

// markList names the marks, the most frequent first.
func (r *numberRead) markList() []string {
	marks := make([]string, 0, len(r.marks))
	for m := range r.marks {
		marks = append(marks, m)
	}
	sort.Slice(marks, func(i, j int) bool {
		if r.marks[marks[i]] != r.marks[marks[j]] {
			return r.marks[marks[i]] > r.marks[marks[j]]
		}
		return marks[i] < marks[j]
	})
	for i, m := range marks {
		marks[i] = strconv.Quote(m)
	}
	return marks
}

// marksNote is the import report's count of each mark stored empty.
func (r *numberRead) marksNote(key string) string {
	if len(r.marks) == 0 {
		return ""
	}
	var parts []string
	for _, m := range r.markList() {
		u, _ := strconv.Unquote(m)
		parts = append(parts, fmt.Sprintf("%s in %d %s", m, r.marks[u], plural(r.marks[u], "cell", "cells")))
	}
	return fmt.Sprintf("%s: %s: marks of a missing value, stored empty", key, strings.Join(parts, ", "))
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// plainNumber is the shape of a number written plainly: an optional minus,
// digits with no leading zero, an optional point and fraction, and an
// optional exponent.
type plainNumber struct {
	intDigits, scale, sig int
	point, sci            bool
}

func readPlainNumber(v string) (plainNumber, bool) {
	var p plainNumber
	body := strings.TrimPrefix(v, "-")
	mant, exp, sci := strings.Cut(strings.ToLower(body), "e")
	if sci {
		e := strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
		if e == "" || !isDigitString(e) || len(e) > 3 {
			return p, false
		}
		p.sci = true
	}
	intPart, frac, point := strings.Cut(mant, ".")
	if intPart == "" && frac == "" || intPart != "" && !isDigitString(intPart) || frac != "" && !isDigitString(frac) || point && frac == "" {
		return p, false
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		return p, false
	}
	p.point, p.intDigits, p.scale = point, len(intPart), len(frac)
	digits := strings.Trim(intPart+frac, "0")
	p.sig = len(digits)
	return p, true
}

func isDigitString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// exactDouble reports whether v, a plainly written number, is the shortest
// text of the double nearest it: its significant digits and their place
// are those of that double's shortest form, trailing zeros aside. Such a
// value is kept exactly by a DOUBLE.
func exactDouble(v string) bool {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	d1, e1 := significand(v)
	d2, e2 := significand(strconv.FormatFloat(f, 'e', -1, 64))
	return d1 == d2 && (d1 == "" || e1 == e2)
}

// significand returns a number's significant digits, without leading
// and trailing zeros, and the place of its point relative to the first.
func significand(v string) (string, int) {
	v = strings.TrimPrefix(strings.ToLower(v), "-")
	mant, exp, _ := strings.Cut(v, "e")
	e, _ := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	place := len(intPart) + e
	for len(digits) > 0 && digits[0] == '0' {
		digits, place = digits[1:], place-1
	}
	return strings.TrimRight(digits, "0"), place
}
