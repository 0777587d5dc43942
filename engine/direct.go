package engine

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// The direct load reads a CSV or JSON file with DuckDB's reader once,
// straight into the final table. Staging every value as text first, then
// casting it into a second table, costs two writes of the whole table;
// the direct load writes it once, at the cost of deciding the types
// before the values have all been seen, and proving the decision after:
//
//  1. The first rows (sampleRows) are classified, and decided as any
//     staged table is.
//  2. One CREATE TABLE ... AS SELECT reads the file. A column decided as
//     a whole number, decimal, ISO date or boolean is cast as it is
//     read, beside a check of every value against the shape the quick
//     pass (sqlclassify.go) gives that type. Every other column is kept
//     as text; one the sample decided as text is screened for the shape
//     its sample had (text, or plain numbers).
//  3. One scan of the stored table sums the checks and screens and takes
//     cheap aggregates. A typed column where some value failed is read
//     again as text (the file is read a second time). For the others,
//     the counts the quick pass would have made of all values are
//     rebuilt from the stored numbers and dates, or from the aggregates
//     of a screened column.
//  4. Text columns neither screened nor settled are classified over the
//     stored table, as staged ones are. One that now decides a type is
//     converted in place by ALTER TABLE, which rewrites that column
//     alone.
//
// Every column is thus decided from the counts of all its values, by
// decide, exactly as on the staged path; TestDirectSameAsStaged holds
// the two paths and the Go one to it.

// sampleRows is how many rows the types are first decided from, at most
// and for tables of up to eight columns; a wider table's sample holds
// about sampleValues values, and at least minSampleRows rows.
const (
	sampleRows    = 8192
	sampleValues  = 8 * sampleRows
	minSampleRows = 256
)

// sampleSize is how many first rows of a table width columns wide
// propose its types.
func sampleSize(width int) int {
	return min(sampleRows, max(minSampleRows, sampleValues/max(width, 1)))
}

// directRead is a reader of a file DuckDB can read, producing text
// columns c1..cN.
type directRead struct {
	// read is the FROM clause of the load; sample, of the first rows.
	read, sample string
	width        int
	// after runs after the load has read the file: it reports the rows
	// the reader left out, and false when the file must go through Go
	// after all.
	after func() (RowStats, bool, error)
}

// loadDirect loads src through r. It returns no table, having left
// nothing behind, when the file must take another path: the Go row
// stream, which rows reports, when the reader handed rows back; else the
// staged path, for a remote backend that takes large tables (their size
// is known only after staging), a cell too long or a checked column that
// decides otherwise than planned.
func (s *Store) loadDirect(ctx context.Context, conn *sql.Conn, f *File, ordinal int, src TableSource, r directRead) (t *Table, rows bool, err error) {
	if s.remote != nil && s.remoteMinRows > 0 {
		return nil, false, nil
	}
	if err := checkWidth(src, r.width); err != nil {
		return nil, false, err
	}
	labels, keys := columnNames(src, r.width)
	plan, err := s.samplePlan(ctx, conn, src, r, keys)
	if err != nil {
		return nil, false, err
	}
	t = newTable(f, ordinal, src, 0)
	for attempt := 0; ; attempt++ {
		flags, stats, ok, err := s.loadTyped(ctx, conn, t, keys, plan, r)
		if err != nil || !ok {
			return nil, err == nil, err
		}
		sum, err := s.summarize(ctx, conn, t, keys, plan, flags)
		if err != nil {
			return nil, false, err
		}
		if len(sum.failed) == 0 {
			decisions, ok, err := s.settleDirect(ctx, conn, t, src, keys, plan, flags, sum)
			if err != nil || !ok {
				return nil, false, err
			}
			setColumns(t, labels, keys, decisions)
			return t, false, s.record(ctx, conn, t, src, stats, nil)
		}
		if _, err := conn.ExecContext(ctx, `DROP TABLE data.`+quoteIdent(t.ID)); err != nil {
			return nil, false, classify(ctx, err)
		}
		if attempt > 0 {
			// Columns kept as text never fail: this is not reached.
			return nil, false, nil
		}
		for _, i := range sum.failed {
			plan[i] = planned{d: textDecision(plan[i].d), screen: screenNone}
		}
	}
}

// planned is how the direct load reads one column: cast as d, checked,
// or kept as text (d is then text) and screened.
type planned struct {
	d      decision
	screen screenKind
}

// screenKind is the test a text column's values get as the file is read,
// chosen from the sample: one that fails on no value settles the
// column's counts by cheap aggregates, with no pass of the quick codes.
type screenKind int

const (
	screenNone    screenKind = iota
	screenText               // every value starts as only text does (quick codes 2 and 3)
	screenNumbers            // every value is a plain number (quick codes 1, 4 and 5)
)

// samplePlan classifies the first rows, decides each column from them,
// and plans how the load reads it. The rows are few, and are classified
// in Go (colStats.add, which counts as the SQL pass does): a statement of
// the quick pass costs milliseconds of planning per column, whatever the
// rows.
func (s *Store) samplePlan(ctx context.Context, conn *sql.Conn, src TableSource, r directRead, keys []string) ([]planned, error) {
	rows, err := conn.QueryContext(ctx, `SELECT * FROM `+r.sample+` LIMIT `+strconv.Itoa(sampleSize(r.width)))
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	cols := make([]colStats, r.width)
	vals := make([]sql.NullString, r.width)
	ptrs := make([]any, r.width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		for i, v := range vals {
			if v.Valid {
				cols[i].add(v.String)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, err)
	}
	plan := make([]planned, r.width)
	for i, d := range decideColumns(src, keys, cols, nil) {
		c := &cols[i]
		switch {
		case d.checked():
			plan[i] = planned{d: d}
		case d.typ == TypeText && c.n > 0 && c.ints+c.decs+c.lead == c.n:
			plan[i] = planned{d: textDecision(d), screen: screenNumbers}
		case d.typ == TypeText && c.n > 0 && c.ints+c.decs+c.lead+c.long+c.digits+c.dateish+c.dates+c.stamps+c.zoned+c.forms == 0:
			plan[i] = planned{d: textDecision(d), screen: screenText}
		default:
			// Written forms, day/month dates and times are cast by ALTER
			// once all values are counted.
			plan[i] = planned{d: textDecision(d)}
		}
	}
	return plan, nil
}

// textDecision keeps a column as text, to be decided over all its values
// once stored.
func textDecision(d decision) decision {
	return decision{typ: TypeText, keepEmpty: d.keepEmpty}
}

// checked reports whether a decision is cast while the file is read,
// with a check of every value: the types whose values the quick pass
// settles alone.
func (d decision) checked() bool {
	switch d.typ {
	case TypeInteger, TypeBoolean:
		return true
	case TypeDecimal:
		return d.written == nil
	case TypeDate:
		return d.format == "" && !d.serial1904 && !strings.HasPrefix(d.reason, "date: spreadsheet")
	}
	return false
}

// checkSQL is true for a value of raw column x that the cast of d would
// not store as the quick pass would count it.
func (d decision) checkSQL(x string) string {
	var ok string
	switch d.typ {
	case TypeInteger:
		// quickIntPattern, as the round trip of the column's own cast (the
		// same expression, computed once) and a length: cheaper than the
		// pattern.
		ok = "(strlen(" + x + ") <= 15 OR strlen(" + x + ") = 16 AND " + x + " < '0') AND " + d.castSQL(x) + "::VARCHAR = " + x
	case TypeDecimal:
		_, scale := decimalPS(d.sqlType)
		ok = "strlen(" + x + ") <= 16 AND regexp_full_match(" + x + ", " +
			quoteString(quickIntPattern+`|-?(0|[1-9][0-9]*)\.[0-9]{1,`+strconv.Itoa(scale)+`}`) + ")"
	case TypeDate:
		// The round trip of quick code 6, without printing: four digits
		// of a year from 1 (year 0 prints as 0001 BC), two of a month and
		// a day, and a date the column's own cast reads.
		ok = x + " GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND " + x + " >= '0001' AND " + d.castSQL(x) + " IS NOT NULL"
	case TypeBoolean:
		ok = "lower(" + trimSQL(x) + ") IN ('true', 'false')"
	}
	// A failed cast is NULL, and so would the check be: coalesce.
	return "NOT coalesce(" + x + " IS NULL OR " + x + " = '' OR " + ok + ", false)"
}

// castSQL casts raw column x as d does, NULL where a value does not read:
// an error would end the load's transaction, and the check marks it.
func (d decision) castSQL(x string) string {
	v := "NULLIF(" + x + ", '')"
	switch d.typ {
	case TypeBoolean:
		return "TRY_CAST(lower(NULLIF(" + trimSQL(x) + ", '')) AS BOOLEAN)"
	case TypeInteger:
		return "TRY_CAST(" + v + " AS BIGINT)"
	case TypeDecimal:
		return "TRY_CAST(" + v + " AS " + d.sqlType + ")"
	}
	return "TRY_CAST(" + v + " AS DATE)"
}

// tested reports whether the column's values are checked or screened as
// the file is read.
func (p planned) tested() bool { return p.d.checked() || p.screen != screenNone }

// failSQL is true for a value of raw column x that fails the column's
// check or screen; empty for a column with neither.
func (p planned) failSQL(x string) string {
	switch {
	case p.d.checked():
		return p.d.checkSQL(x)
	case p.screen == screenText:
		return "(" + x + " <> '' AND " + quickMaybeSQL(x) + ")"
	case p.screen == screenNumbers:
		return "(" + x + " <> '' AND NOT (strlen(" + x + ") <= 16 AND regexp_full_match(" + x + ", " + quoteString(plainNumbersPattern) + ")))"
	}
	return ""
}

// loadTyped reads the file into table t by plan: checked columns cast,
// the others as text, and the fails of each 64 checks and screens as the
// bits of one more column, whose names it returns. It returns the rows the
// reader left out, and false, having dropped t, when the file must go
// through Go.
func (s *Store) loadTyped(ctx context.Context, conn *sql.Conn, t *Table, keys []string, plan []planned, r directRead) ([]string, RowStats, bool, error) {
	sel := make([]string, len(plan))
	var bits []string
	for i, p := range plan {
		raw := stageColumn(i + 1)
		if p.d.checked() {
			sel[i] = p.d.castSQL(raw) + " AS " + quoteIdent(keys[i])
		} else {
			sel[i] = p.d.exprOf(raw) + " AS " + quoteIdent(keys[i])
		}
		if fail := p.failSQL(raw); fail != "" {
			// A shifted boolean costs less than a CASE; a NULL test (of a
			// NULL value) is no fail.
			bits = append(bits, "(coalesce("+fail+", false)::UBIGINT << "+strconv.Itoa(len(bits)%64)+")")
		}
	}
	flags := flagNames(keys, (len(bits)+63)/64)
	for j, name := range flags {
		sel = append(sel, strings.Join(bits[j*64:min(len(bits), j*64+64)], " | ")+" AS "+quoteIdent(name))
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE data.`+quoteIdent(t.ID)+` AS SELECT `+strings.Join(sel, ", ")+` FROM `+r.read); err != nil {
		return nil, RowStats{}, false, classify(ctx, err)
	}
	stats, ok, err := r.after()
	if err != nil || !ok {
		if _, dropErr := conn.ExecContext(ctx, `DROP TABLE data.`+quoteIdent(t.ID)); dropErr != nil && err == nil {
			err = classify(ctx, dropErr)
		}
		return nil, RowStats{}, false, err
	}
	return flags, stats, true, nil
}

// summary is one scan of a loaded table: its rows, the checked columns
// where some value failed, and statsSQL's aggregates of each column.
type summary struct {
	failed []int
	vals   []string
}

// summarize scans table t once for its rows, the fails of its checks and
// screens, and the aggregates settleDirect reads. A screened column where
// some value failed is marked screenNone.
func (s *Store) summarize(ctx context.Context, conn *sql.Conn, t *Table, keys []string, plan []planned, flags []string) (summary, error) {
	aggs := []string{"count(*)"}
	for _, name := range flags {
		aggs = append(aggs, "bit_or("+quoteIdent(name)+")")
	}
	for i, p := range plan {
		aggs = append(aggs, p.statsSQL(quoteIdent(keys[i]))...)
	}
	for i, a := range aggs {
		aggs[i] = "coalesce((" + a + ")::VARCHAR, '0')"
	}
	vals := make([]string, len(aggs))
	ptrs := make([]any, len(aggs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := conn.QueryRowContext(ctx, `SELECT `+strings.Join(aggs, ", ")+` FROM data.`+quoteIdent(t.ID)).Scan(ptrs...); err != nil {
		return summary{}, classify(ctx, err)
	}
	t.RowCount, _ = strconv.ParseInt(vals[0], 10, 64)
	masks := make([]uint64, len(flags))
	for j := range masks {
		masks[j], _ = strconv.ParseUint(vals[1+j], 10, 64)
	}
	var sum summary
	bit := 0
	for i, p := range plan {
		if !p.tested() {
			continue
		}
		if masks[bit/64]&(1<<(bit%64)) != 0 {
			if p.d.checked() {
				sum.failed = append(sum.failed, i)
			} else {
				plan[i].screen = screenNone
			}
		}
		bit++
	}
	sum.vals = vals[1+len(flags):]
	return sum, nil
}

// flagNames returns n column names that no key takes.
func flagNames(keys []string, n int) []string {
	taken := make(map[string]bool, len(keys))
	for _, k := range keys {
		taken[strings.ToLower(k)] = true
	}
	names := make([]string, 0, n)
	for j := 0; len(names) < n; j++ {
		name := "dd_check_" + strconv.Itoa(j)
		if !taken[name] {
			names = append(names, name)
		}
	}
	return names
}

// settleDirect decides every column of the loaded table t from the counts
// of all its values: checked columns from their stored values, screened
// text columns from cheap aggregates, other text columns by the SQL pass
// over the stored text. It drops the flag columns, and converts in place
// a text column that decides a type. It returns false, having dropped t,
// when a checked column decides otherwise than planned or a cell is too
// long: the staged path then loads the file, or names the cell.
func (s *Store) settleDirect(ctx context.Context, conn *sql.Conn, t *Table, src TableSource, keys []string, plan []planned, flags []string, sum summary) ([]decision, bool, error) {
	table := "data." + quoteIdent(t.ID)
	drop := func() ([]decision, bool, error) {
		if _, err := conn.ExecContext(ctx, `DROP TABLE `+table); err != nil {
			return nil, false, classify(ctx, err)
		}
		return nil, false, nil
	}
	for _, name := range flags {
		if _, err := conn.ExecContext(ctx, `ALTER TABLE `+table+` DROP COLUMN `+quoteIdent(name)); err != nil {
			return nil, false, classify(ctx, err)
		}
	}
	cols := make([]colStats, len(plan))
	var open []string
	var openAt []int
	for i, p := range plan {
		v := sum.vals[i*planStats : i*planStats+planStats]
		if longest, _ := strconv.Atoi(v[0]); !p.d.checked() && longest > MaxCellChars {
			return drop()
		}
		st, ok := p.stats(v)
		if !ok {
			open, openAt = append(open, quoteIdent(keys[i])), append(openAt, i)
		}
		cols[i] = st
	}
	stored, err := classifyColumns(ctx, conn, table, open)
	if err != nil {
		return nil, false, err
	}
	for j, i := range openAt {
		cols[i] = stored[j]
	}
	decisions := decideColumns(src, keys, cols, nil)
	for i, d := range decisions {
		p := plan[i].d
		switch {
		case p.checked() && (d.typ != p.typ || d.sqlType != p.sqlType || !d.checked()):
			return drop()
		case !p.checked() && d.typ != TypeText:
			k := quoteIdent(keys[i])
			if _, err := conn.ExecContext(ctx, `ALTER TABLE `+table+` ALTER COLUMN `+k+` SET DATA TYPE `+d.sqlTypeName()+` USING `+d.exprOf(k)); err != nil {
				return nil, false, classify(ctx, err)
			}
		}
	}
	return decisions, true, nil
}

// planStats is how many aggregates statsSQL makes of each column.
const planStats = 5

// plainNumbersPattern is quick codes 1, 4 and 5 (of at most 16
// characters): a whole number as int64 prints it, a decimal without
// superfluous zeros before its point, digits with a leading zero.
const plainNumbersPattern = quickIntPattern + `|-?(0|[1-9][0-9]*)\.[0-9]+|0[0-9]{1,14}`

// statsSQL returns the aggregates of stored column k that stats reads:
// for text, the longest value in bytes first. Each is a cheap test
// (comparisons, lengths and positions), as the screens have already
// looked at every value.
func (p planned) statsSQL(k string) []string {
	switch {
	case p.d.typ == TypeInteger || p.d.typ == TypeDecimal:
		return []string{"count(" + k + ")", "count_if(" + k + " < 0)", "max(abs(" + k + "))", "0", "0"}
	case p.d.checked():
		return []string{"count(" + k + ")", "0", "0", "0", "0"}
	}
	n := "count(" + k + ")"
	if p.d.keepEmpty {
		n = "count_if(" + k + " <> '')"
	}
	longest := "max(strlen(" + k + "))"
	if p.screen != screenNumbers {
		return []string{longest, n, "0", "0", "0"}
	}
	// Every value passed plainNumbersPattern: one with a point is a
	// decimal, one from "00" to below "1" has a leading zero, one below
	// "0" a minus sign.
	point := "contains(" + k + ", '.')"
	return []string{longest, n,
		"count_if(" + point + ")",
		"count_if(" + k + " > '0' AND " + k + " < '1' AND NOT " + point + ")",
		"count_if(" + k + " < '0' AND " + k + " <> '')"}
}

// stats returns the counts the quick pass would make of the column from
// the aggregates of statsSQL, or false when only that pass can tell
// them. A text column keeps its sample's decision of text whatever these
// counts (a checked or cast decision would have been planned otherwise),
// so counts that only choose between numeric types are left out: the
// width and places of numbers, and booleans (the sample holds a value that
// is not one).
func (p planned) stats(v []string) (colStats, bool) {
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	if p.d.checked() {
		whole, _, _ := strings.Cut(v[2], ".")
		return checkedStats(p.d, num(v[0]), num(v[1]), int64(len(whole))), true
	}
	n := num(v[1])
	switch p.screen {
	case screenText:
		return colStats{n: n}, true
	case screenNumbers:
		decs, lead, negative := num(v[2]), num(v[3]), num(v[4])
		return colStats{n: n, ints: n - decs - lead, decs: decs, lead: lead, digits: n - negative, trimmed: true}, true
	}
	return colStats{}, false
}

// checkedStats rebuilds the counts the quick pass makes of a checked
// column whose every value passed its check, from the stored values: n
// of them, negative below zero, the widest of intDigits whole digits.
// A decimal's scale is the planned one: every value has at most that
// many places, and the sample holds one with that many.
func checkedStats(d decision, n, negative, intDigits int64) colStats {
	switch d.typ {
	case TypeInteger:
		return colStats{n: n, ints: n, intDigits: intDigits, digits: n - negative, trimmed: true}
	case TypeDecimal:
		_, scale := decimalPS(d.sqlType)
		// Some value is written with places: the sample's.
		return colStats{n: n, decs: n, intDigits: intDigits, scale: int64(scale), digits: n - negative, trimmed: true}
	case TypeDate:
		return colStats{n: n, dates: n, stamps: n, trimmed: true}
	}
	return colStats{n: n, bools: n}
}

// sqlTypeName is the SQL type the decision's expression gives.
func (d decision) sqlTypeName() string { return duckDBType(d.typ, d.sqlType) }
