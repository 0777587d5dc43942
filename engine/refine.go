package engine

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// Limits of the cells of other text a numeric column may hold.
const (
	// maxCleared is the most cells of other text ("Series discontinued",
	// a footnote) a column of numbers may hold and stay numeric, each
	// stored empty and listed in the report.
	maxCleared = 100
	// clearedShare is the largest share of a column's values they may be:
	// one in twenty.
	clearedShare = 20
)

// refine reads again each text column of a loaded table that the counts
// found mostly numbers (catalog.Column.Numberish), and makes it numeric
// when every other value is a mark of a missing value or a few cells of
// other text without a digit (notes such as "Series discontinued", at
// most maxCleared and one value in clearedShare), and every number
// survives a type exactly: a number of more than 15 significant digits
// with a point or an exponent is a DOUBLE when it is the shortest text of
// a double (2813571753.8725324), else a DECIMAL when it fits 38 digits.
// Digit strings without a point past 15 digits stay text: they are codes.
// It returns notes for the import report, counting each mark stored
// empty, and the cells of other text stored empty, each with its row in
// the table and, where rows says it, in the sheet or file.
func (s *Store) refine(ctx context.Context, conn *sql.Conn, t *catalog.Table, rows *RowNumbers) ([]string, []catalog.ClearedCell, error) {
	var notes []string
	var cleared []catalog.ClearedCell
	for i := range t.Columns {
		c := &t.Columns[i]
		if !c.Numberish || c.Type != typing.TypeText {
			continue
		}
		c.Numberish = false
		r, err := s.readNumbers(ctx, conn, t, c.Key)
		if err != nil {
			return nil, nil, err
		}
		sqlType, typ, ok := r.decide()
		if !ok {
			continue
		}
		k := ducksql.Ident(c.Key)
		var marks []string
		for _, m := range typing.MissingMarks {
			marks = append(marks, "'"+strings.ReplaceAll(m, "'", "''")+"'")
		}
		// Every value but the marks and the notes was proved a number
		// of the type: TRY_CAST empties only the notes, which the count
		// after it checks.
		cast := "CAST"
		if len(r.notes) > 0 {
			cast = "TRY_CAST"
		}
		q := `ALTER TABLE data.` + ducksql.Ident(t.ID) + ` ALTER COLUMN ` + k + ` SET DATA TYPE ` + sqlType +
			` USING CASE WHEN lower(` + k + `) IN (` + strings.Join(marks, ", ") + `) THEN NULL ELSE ` + cast + `(` + k + ` AS ` + sqlType + `) END`
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, nil, classify(ctx, err)
		}
		if err := s.checkRefined(ctx, conn, t, c.Key, r.n); err != nil {
			return nil, nil, err
		}
		c.Type, c.Identifier, c.Reason, c.Trimmed = typ, false, r.reason(typ), 0
		if note := r.marksNote(c.Key); note != "" {
			notes = append(notes, note)
		}
		if note := r.notesNote(c.Key, rows); note != "" {
			notes = append(notes, note)
		}
		for _, n := range r.notes {
			cleared = append(cleared, catalog.ClearedCell{Row: rows.Row(n.rowid), TableRow: n.rowid + 1, Column: c.Key, Text: n.text})
		}
	}
	return notes, cleared, nil
}

// checkRefined makes sure a column made numeric kept every number: n
// values, the marks and notes stored empty.
func (s *Store) checkRefined(ctx context.Context, conn *sql.Conn, t *catalog.Table, key string, n int64) error {
	var got int64
	if err := conn.QueryRowContext(ctx, `SELECT count(`+ducksql.Ident(key)+`) FROM data.`+ducksql.Ident(t.ID)).Scan(&got); err != nil {
		return classify(ctx, err)
	}
	if got != n {
		return fmt.Errorf("engine: column %s made numeric holds %d values, not the %d numbers read", key, got, n)
	}
	return nil
}

// numberRead is what a second read of a column found.
type numberRead struct {
	n, long, sci     int64
	other            int64
	inexact          int64
	whole            bool
	intDigits, scale int
	marks            map[string]int64
	notes            []noteCell
	inexact1         string
}

// noteCell is a cell of other text in a column of numbers, by its row id.
type noteCell struct {
	rowid int64
	text  string
}

// readNumbers reads every value of text column key of t, each with its
// ordinal in the table (a table loaded in one transaction has row ids in
// a run from its first, which need not be 0 before the commit).
func (s *Store) readNumbers(ctx context.Context, conn *sql.Conn, t *catalog.Table, key string) (*numberRead, error) {
	rows, err := conn.QueryContext(ctx, `SELECT rowid - (SELECT min(rowid) FROM data.`+ducksql.Ident(t.ID)+`), `+ducksql.Ident(key)+
		` FROM data.`+ducksql.Ident(t.ID)+` WHERE `+ducksql.Ident(key)+` IS NOT NULL`)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	r := &numberRead{whole: true, marks: map[string]int64{}}
	var v string
	var rowid int64
	for rows.Next() {
		if err := rows.Scan(&rowid, &v); err != nil {
			return nil, classify(ctx, err)
		}
		r.add(rowid, v)
		if r.other > 0 || len(r.notes) > maxCleared {
			// One value neither a number, a mark nor a note, or too
			// many notes, keeps the text.
			return r, nil
		}
	}
	slices.SortFunc(r.notes, func(a, b noteCell) int { return cmp.Compare(a.rowid, b.rowid) })
	return r, classify(ctx, rows.Err())
}

// noteText reports whether v, a value in a column of numbers that is
// none, reads as a note: text without a digit, which holds no value.
func noteText(v string) bool {
	return !strings.ContainsAny(v, "0123456789")
}

func (r *numberRead) add(rowid int64, v string) {
	if typing.MissingMark(v) {
		r.marks[v]++
		return
	}
	p, ok := readPlainNumber(v)
	switch {
	case !ok && noteText(v):
		r.notes = append(r.notes, noteCell{rowid: rowid, text: v})
		return
	case !ok || p.sig > 15 && !p.point && !p.sci:
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
	case r.other > 0 || r.n == 0 || len(r.notes) > maxCleared || int64(len(r.notes))*clearedShare > r.n+r.markCount()+int64(len(r.notes)):
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
	if n := len(r.notes); n > 0 {
		fmt.Fprintf(&b, "; %d %s of other text (%s) stored empty", n, plural(int64(n), "cell", "cells"), strconv.Quote(r.notes[0].text))
	}
	return b.String()
}

// notesNote is the import report's list of the cells of other text
// stored empty, by their rows.
func (r *numberRead) notesNote(key string, rows *RowNumbers) string {
	if len(r.notes) == 0 {
		return ""
	}
	var parts []string
	for i, n := range r.notes {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(r.notes)-i))
			break
		}
		at := fmt.Sprintf("table row %d", n.rowid+1)
		if row := rows.Row(n.rowid); row > 0 {
			at = fmt.Sprintf("row %d", row)
		}
		parts = append(parts, fmt.Sprintf("%s %s", at, strconv.Quote(n.text)))
	}
	return fmt.Sprintf("%s: %d %s of other text in a column of numbers stored empty (cleared_cells lists each): %s",
		key, len(r.notes), plural(int64(len(r.notes)), "cell", "cells"), strings.Join(parts, ", "))
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
