package engine

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// The direct load reads a CSV or JSON file with DuckDB's reader once,
// straight into the final table. Staging every value as text first, then
// casting it into a second table, costs two writes of the whole table;
// the direct load writes it once, at the cost of deciding the types
// before the values have all been seen, and proving the decision after:
//
//  1. The first rows (sampleRows) are classified, and decided as any
//     staged table is; they also choose each text column's storage
//     compression (compressionFor).
//  2. The table is created, and one INSERT ... SELECT reads the file
//     into it. A column decided as a whole number, decimal, ISO date or
//     boolean is cast as it is read, beside a check of every value
//     against the shape the quick pass (sqlclassify.go) gives that type.
//     Every other column is kept as text; one the sample decided as text
//     is screened for the shape its sample had (text, or plain numbers).
//     An inner select casts each checked value, and finds the spaces
//     around each text value (ducksql.Edge), once for both what is stored
//     and the facts below (readColumn).
//  3. Beside the values, the load packs what the checks and screens
//     found of each value, and the few other facts the counts need (the
//     sign, point and leading zero of screened numbers, a cell too
//     long), as bits of flag columns. One scan sums every bit, from the
//     flag columns grouped, and another counts the typed values of
//     checked columns. A typed column where some value failed is read
//     again as text (the file is read a second time). For the others,
//     the counts the quick pass would have made of all values are
//     rebuilt from these sums.
//  4. Text columns neither screened nor settled are classified over the
//     stored table, as staged ones are. One that now decides a type is
//     converted in place by ALTER TABLE, which rewrites that column
//     alone.
//
// Every column is thus decided from the counts of all its values, by
// decide, exactly as on the staged path; TestDirectSameAsStaged holds
// the two paths and the Go one to it.

// readTyped is the direct load as a way of loading: a CSV file read_csv
// takes, or a JSON file of flat records read_json takes. It hands over to
// readAsText when the file cannot be read so (outside the incoming
// folder, a remote backend that wants the table's size first, a cell too
// long, a column that decides otherwise than planned), and to streamRows
// when the reader handed rows back that only the Go stream keeps.
type readTyped struct{}

func (readTyped) load(ctx context.Context, s *Store, conn *sql.Conn, job loadJob) (*catalog.Table, loadWay, error) {
	var (
		r  directRead
		ok bool
	)
	if job.src.CSV != nil {
		var err error
		if r, ok, err = s.csvDirect(ctx, conn, job.ordinal, job.src); err != nil {
			return nil, nil, err
		}
	} else {
		r, ok = s.jsonDirect(job.src)
	}
	if !ok {
		return nil, readAsText{}, nil
	}
	t, handedBack, err := s.loadDirect(ctx, conn, job.f, job.ordinal, job.src, r)
	switch {
	case err != nil || t != nil:
		return t, nil, err
	case handedBack:
		return nil, streamRows{}, nil
	}
	return nil, readAsText{}, nil
}

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
	// first, when set, streams the file's rows in Go, and is read for the
	// first rows instead of sample: parsing a few rows costs less than a
	// statement of DuckDB's reader. Its parse may differ from the
	// reader's on broken lines; the first rows only propose the types.
	first func(yield func(row []string) error) (RowStats, error)
	width int
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
func (s *Store) loadDirect(ctx context.Context, conn *sql.Conn, f *catalog.File, ordinal int, src TableSource, r directRead) (t *catalog.Table, rows bool, err error) {
	if s.remote != nil && s.remoteMinRows > 0 {
		return nil, false, nil
	}
	if err := s.checkWidth(src, r.width); err != nil {
		return nil, false, err
	}
	labels, keys := columnNames(src, r.width)
	plan, err := s.samplePlan(ctx, conn, src, r, keys)
	if err != nil {
		return nil, false, err
	}
	t = newTable(f, ordinal, src, 0)
	for attempt := 0; ; attempt++ {
		layout, words := factLayout(plan)
		flags, stats, ok, err := s.loadTyped(ctx, conn, t, keys, plan, words, r)
		if err != nil || !ok {
			return nil, err == nil, err
		}
		sum, err := s.summarize(ctx, conn, t, keys, plan, layout, flags)
		if err != nil {
			return nil, false, err
		}
		if len(sum.failed) == 0 {
			decisions, ok, err := s.settleDirect(ctx, conn, t, src, keys, plan, flags, sum)
			if err != nil || !ok {
				return nil, false, err
			}
			setColumns(t, labels, keys, decisions)
			for i := range t.Columns {
				c := &t.Columns[i]
				count := func(f fact) int64 { return sum.count(i, f) }
				if c.Identifier && c.Type == typing.TypeText && plan[i].allDigits(count) {
					c.Digits = plan[i].digits(count)
				}
			}
			return t, false, s.record(ctx, conn, t, src, stats, nil)
		}
		if _, err := conn.ExecContext(ctx, `DROP TABLE data.`+ducksql.Ident(t.ID)); err != nil {
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
	d      typing.Decision
	screen screenKind
	// sampled is how many values the sample holds, of a screened column.
	sampled int64
	// noNumbers is the column's hint that its values are text (JSON
	// strings): no count makes it a number.
	noNumbers bool
	// compression is the storage compression the load gives a column that
	// stays text (see compressionFor); empty lets DuckDB choose.
	compression string
	// length is the length of the sample's first value, of a column
	// screened for digits or numbers: factLength counts values of
	// another length.
	length int
}

// firstLength is the length of the first value of vals that is not
// empty.
func firstLength(vals []string) int {
	for _, v := range vals {
		if v != "" {
			return len(v)
		}
	}
	return 0
}

// screenKind is the test a text column's values get as the file is read,
// chosen from the sample: one that fails on no value settles the
// column's counts by cheap aggregates, with no pass of the quick codes.
type screenKind int

const (
	screenNone    screenKind = iota
	screenText               // every value starts as only text does (quick codes 2 and 3)
	screenNumbers            // every value is a plain number (quick codes 1, 4 and 5)
	screenDigits             // every value is 1 to 15 digits (quick codes 1 and 5, unsigned)
)

// samplePlan classifies the first rows, decides each column from them,
// and plans how the load reads it. The rows are few, and are classified
// in Go (colStats.add, which counts as the SQL pass does): the quick
// pass's statement over them took about 30 ms per column (0.43 s for an
// eight-column file, 0.25 s of it even for ten rows), a third of the
// whole load of a million rows.
func (s *Store) samplePlan(ctx context.Context, conn *sql.Conn, src TableSource, r directRead, keys []string) ([]planned, error) {
	cols, vals, err := s.sampleStats(ctx, conn, r)
	if err != nil {
		return nil, err
	}
	plan := make([]planned, r.width)
	for i, d := range decideColumns(src, keys, cols, nil) {
		c := &cols[i]
		noNumbers := i < len(src.Hints) && src.Hints[i].NoNumbers
		switch {
		case readChecked(d):
			plan[i] = planned{d: d}
		case d.Type == typing.TypeText && c.N > 0 && c.Ints+c.Decs+c.Lead == c.N && c.Decs == 0 && c.Digits == c.N:
			// No sign and no point: a cheaper screen, of digits alone.
			plan[i] = planned{d: textDecision(d), screen: screenDigits, sampled: c.N, noNumbers: noNumbers, compression: compressionFor(vals[i]), length: firstLength(vals[i])}
		case d.Type == typing.TypeText && c.N > 0 && c.Ints+c.Decs+c.Lead == c.N:
			plan[i] = planned{d: textDecision(d), screen: screenNumbers, sampled: c.N, noNumbers: noNumbers, length: firstLength(vals[i])}
		case d.Type == typing.TypeText && c.N > 0 && c.Ints+c.Decs+c.Lead+c.Long+c.Digits+c.Dateish+c.Dates+c.Stamps+c.Zoned+c.Forms == 0:
			plan[i] = planned{d: textDecision(d), screen: screenText, sampled: c.N, compression: compressionFor(vals[i])}
		default:
			// Written forms, day/month dates and times are cast by ALTER
			// once all values are counted.
			plan[i] = planned{d: textDecision(d)}
		}
	}
	return plan, nil
}

// errSampled stops the row stream once the first rows are in.
var errSampled = errors.New("engine: sampled")

// sampleStats counts the shapes of the first rows of r, by column, and
// returns the values it counted.
func (s *Store) sampleStats(ctx context.Context, conn *sql.Conn, r directRead) ([]typing.Stats, [][]string, error) {
	cols := make([]typing.Stats, r.width)
	vals := make([][]string, r.width)
	limit := sampleSize(r.width)
	add := func(i int, v string) {
		cols[i].Add(v)
		vals[i] = append(vals[i], v)
	}
	if r.first != nil {
		n := 0
		_, err := r.first(func(row []string) error {
			for i, v := range row[:min(len(row), r.width)] {
				add(i, v)
			}
			if n++; n == limit {
				return errSampled
			}
			return ctx.Err()
		})
		if err == nil || errors.Is(err, errSampled) {
			return cols, vals, nil
		}
		// A line the stream refuses is for DuckDB's reader to report.
		clear(cols)
		clear(vals)
	}
	rows, err := conn.QueryContext(ctx, `SELECT * FROM `+r.sample+` LIMIT `+strconv.Itoa(limit))
	if err != nil {
		return nil, nil, classify(ctx, err)
	}
	defer rows.Close()
	row := make([]sql.NullString, r.width)
	ptrs := make([]any, r.width)
	for i := range row {
		ptrs[i] = &row[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, classify(ctx, err)
		}
		for i, v := range row {
			if v.Valid {
				add(i, v.String)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, classify(ctx, err)
	}
	return cols, vals, nil
}

// compressionFor chooses the storage compression of a text column from
// its first values: DuckDB otherwise tries every method on every
// segment, and building a dictionary of values that hardly repeat
// (identifiers) is the dearest part of writing them. Mostly distinct
// values get FSST, values that repeat often a dictionary; DuckDB still
// stores a segment uncompressed where that is smaller. Between the two,
// and for a sample too small to tell, DuckDB chooses.
func compressionFor(vals []string) string {
	n := 0
	seen := make(map[string]struct{}, len(vals)/4)
	for _, v := range vals {
		if v == "" {
			continue
		}
		n++
		seen[v] = struct{}{}
	}
	switch {
	case n < minSampleRows:
		return ""
	case 2*len(seen) >= n:
		return "fsst"
	case 32*len(seen) <= n:
		return "dictionary"
	}
	return ""
}

// textDecision keeps a column as text, to be decided over all its values
// once stored.
func textDecision(d typing.Decision) typing.Decision {
	return typing.Decision{Type: typing.TypeText, KeepEmpty: d.KeepEmpty}
}

// readChecked reports whether a decision is cast while the file is read,
// with a check of every value: the types whose values the quick pass
// settles alone.
func readChecked(d typing.Decision) bool {
	switch d.Type {
	case typing.TypeInteger, typing.TypeBoolean:
		return true
	case typing.TypeDecimal:
		return d.Written == nil
	case typing.TypeDate:
		return d.Format == "" && !d.Serial1904 && !strings.HasPrefix(d.Reason, "date: spreadsheet")
	}
	return false
}

// checkSQL is true for a value of raw column x that the cast of d
// (castSQL, computed once as cast) would not store as the quick pass
// would count it.
func checkSQL(d typing.Decision, x, cast string) string {
	var ok string
	switch d.Type {
	case typing.TypeInteger:
		// quickIntPattern as GLOBs, by the first byte: 1 to 9, then
		// digits; a minus sign, then 1 to 9 and digits; else zero alone.
		// Every value of the pattern is a BIGINT. Printing the cast to
		// compare it with the value cost 20 ms a million values, the
		// GLOBs next to nothing for short numbers.
		ok = "CASE WHEN " + x + " >= '1' AND " + x + " < ':' THEN strlen(" + x + ") <= 15 AND NOT " + x + " GLOB '*[!0-9]*' WHEN " + x + " < '0' THEN strlen(" + x + ") <= 16 AND " +
			x + " GLOB '-[1-9]*' AND NOT " + x + " GLOB '-*[!0-9]*' ELSE " + x + " = '0' END"
	case typing.TypeDecimal:
		// A value written as the cast prints it, all places shown, is of
		// the pattern's shape; the pattern is tried on the others only.
		// A value of the shape may still not fit the type's digits.
		_, scale := catalog.DecimalParts(d.SQLType)
		ok = "strlen(" + x + ") <= 16 AND " + cast + " IS NOT NULL AND CASE WHEN " + cast + "::VARCHAR = " + x + " THEN true ELSE regexp_full_match(" + x + ", " +
			ducksql.Literal(quickIntPattern+`|-?(0|[1-9][0-9]*)\.[0-9]{1,`+strconv.Itoa(scale)+`}`) + ") END"
	case typing.TypeDate:
		// The round trip of quick code 6, without printing: four digits
		// of a year from 1 (year 0 prints as 0001 BC), two of a month and
		// a day, and a date the column's own cast reads.
		ok = x + " GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND " + x + " >= '0001' AND " + cast + " IS NOT NULL"
	case typing.TypeBoolean:
		ok = "lower(" + ducksql.Trim(x) + ") IN ('true', 'false')"
	}
	// A failed cast is NULL, and so would the check be: coalesce.
	return "NOT coalesce(" + x + " IS NULL OR " + x + " = '' OR " + ok + ", false)"
}

// castSQL casts raw column x as d does, NULL where a value does not read:
// an error would end the load's transaction, and the check marks it.
func castSQL(d typing.Decision, x string) string {
	v := "NULLIF(" + x + ", '')"
	switch d.Type {
	case typing.TypeBoolean:
		return "TRY_CAST(lower(NULLIF(" + ducksql.Trim(x) + ", '')) AS BOOLEAN)"
	case typing.TypeInteger:
		return "TRY_CAST(" + v + " AS BIGINT)"
	case typing.TypeDecimal:
		return "TRY_CAST(" + v + " AS " + d.SQLType + ")"
	}
	return "TRY_CAST(" + v + " AS DATE)"
}

// A fact is one thing the load finds of a value as it reads the file,
// kept as one bit of a flag column.
type fact int

const (
	factFail     fact = iota // fails the column's check or screen
	factNegative             // a minus sign: below zero
	factPoint                // a decimal point
	factLead                 // a leading zero
	factLong                 // longer than a cell may be, in bytes (of the table: any column whose check bounds no length)
	factBlank                // only spaces: stored empty
	factPadded               // text with spaces around it: stored trimmed
	factLength               // a length other than the sample's first value's
)

// facts returns the facts the load finds of the column's values: what
// its check or screen finds, and what stats needs beyond what the stored
// values tell cheaply (see summarize). A text column neither screened
// nor checked has none: it is classified once stored.
func (p planned) facts() []fact {
	var out []fact
	switch {
	case readChecked(p.d), p.screen == screenText:
		out = []fact{factFail}
	case p.screen == screenDigits:
		out = []fact{factFail, factLead, factLength}
	case p.screen == screenNumbers:
		out = []fact{factFail, factNegative, factPoint, factLead, factLength}
	}
	// What storing changes of the values, for the import report, of a
	// column stored as text. A checked column's check fails on a value of
	// only spaces (none of its types reads one), so a column that passes
	// has none to count.
	if !readChecked(p.d) {
		out = append(out, factBlank, factPadded)
	}
	return out
}

// readColumn is a column of the file as the load's select has it: its
// raw text, and what an inner select computed of it once, for both the
// stored value and the facts: its Edge code (a column kept as text) or
// its cast (a checked column). Each was computed twice or three times
// in one select, which DuckDB does not share between CASEs: 80 ms of a
// million-row load of eight columns.
type readColumn struct {
	raw, edge, cast string
}

// readOf names column i of the load's inner select.
func readOf(i int) readColumn {
	n := strconv.Itoa(i + 1)
	return readColumn{raw: ducksql.StageColumn(i + 1), edge: `"e` + n + `"`, cast: `"v` + n + `"`}
}

// inner returns the inner select's terms for column c planned as p: its
// raw text, and its cast or Edge code.
func (p planned) inner(c readColumn) string {
	if readChecked(p.d) {
		return c.raw + ", " + castSQL(p.d, c.raw) + " AS " + c.cast
	}
	return c.raw + ", " + ducksql.Edge(c.raw) + " AS " + c.edge
}

// stored is the value the load stores of column c planned as p.
func (p planned) stored(c readColumn) string {
	if readChecked(p.d) {
		return c.cast
	}
	return ducksql.EdgedText(c.raw, c.edge, p.d.KeepEmpty)
}

// factSQL is the SQL of fact f of a value of column c: true, false or
// NULL (which is no fact). A value that fails the column's check or
// screen sends the column another way, so the other facts need hold only
// of values that pass.
func (p planned) factSQL(f fact, c readColumn) string {
	x := c.raw
	switch f {
	case factBlank:
		return "(" + c.edge + " = 1)"
	case factPadded:
		return "(" + c.edge + " = 2)"
	case factNegative:
		return "(" + x + " < '0' AND " + x + " <> '')"
	case factPoint:
		return "contains(" + x + ", '.')"
	case factLength:
		return "(" + x + " <> '' AND strlen(" + x + ") <> " + strconv.Itoa(p.length) + ")"
	case factLead:
		// From "00" to below "1" is a leading zero, when there is no point.
		lead := "(" + x + " > '0' AND " + x + " < '1')"
		if p.screen == screenNumbers {
			lead = "(" + x + " > '0' AND " + x + " < '1' AND NOT contains(" + x + ", '.'))"
		}
		return lead
	}
	switch {
	case readChecked(p.d):
		return checkSQL(p.d, x, c.cast)
	case p.screen == screenText:
		// A projection computes every operand of AND and OR; a CASE tests
		// the pattern only on values whose first bytes may start it (its
		// condition stops at the first operand that decides): an ASCII
		// byte up to '9', two upper-case letters (ISO codes; an anchored
		// GLOB, cheaper than the second character's substring), or any
		// byte other than ASCII (currency signs).
		return "CASE WHEN " + x + " < ':' OR " + x + " >= " + ducksql.Literal("\u0080") + " OR " + x + " GLOB '[A-Z][A-Z]*' THEN " + quickMaybeSQL(x) + " ELSE false END"
	case p.screen == screenDigits:
		// Every string of 1 to 15 digits is quick code 1 or 5.
		return "CASE WHEN strlen(" + x + ") BETWEEN 1 AND 15 THEN " + x + " GLOB '*[!0-9]*' ELSE " + x + " <> '' END"
	}
	return "(" + x + " <> '' AND NOT (strlen(" + x + ") <= 16 AND regexp_full_match(" + x + ", " + ducksql.Literal(plainNumbersPattern) + ")))"
}

// longSQL is true for a value of raw text column x longer than a cell may
// be; its characters are counted past that, on the staged path.
func longSQL(x string) string { return "strlen(" + x + ") > " + strconv.Itoa(MaxCellChars) }

// factBit is a bit of the flag columns: fact f of column col, or of the
// table when col is -1.
type factBit struct {
	col int
	f   fact
}

// factLayout returns the bits the load packs, in order, 64 to a column,
// and the SQL over the raw columns of each column of them (a word).
func factLayout(plan []planned) ([]factBit, []string) {
	var bits []factBit
	var terms, long []string
	add := func(b factBit, sql string) {
		bits, terms = append(bits, b), append(terms, sql)
	}
	for i, p := range plan {
		c := readOf(i)
		facts := p.facts()
		for k := 0; k < len(facts); k++ {
			f := facts[k]
			if f == factBlank && k+1 < len(facts) && facts[k+1] == factPadded && len(bits)%64 != 63 {
				// Edge is 1 for blank and 2 for padded: shifted, it sets
				// the two bits at once, one test of the value for both.
				add(factBit{i, f}, "("+c.edge+"::UBIGINT << "+strconv.Itoa(len(bits)%64)+")")
				add(factBit{i, factPadded}, "")
				k++
				continue
			}
			add(factBit{i, f}, bitSQL(p.factSQL(f, c), len(bits)%64))
		}
		// The checks of numbers and dates bound a value's length; a
		// boolean's trims it, and a failed screen leaves the column open.
		if !readChecked(p.d) || p.d.Type == typing.TypeBoolean {
			long = append(long, longSQL(c.raw))
		}
	}
	if len(long) > 0 {
		add(factBit{-1, factLong}, bitSQL(strings.Join(long, " OR "), len(bits)%64))
	}
	var words []string
	for j := 0; j < len(terms); j += 64 {
		var word []string
		for _, t := range terms[j:min(len(terms), j+64)] {
			if t != "" {
				word = append(word, t)
			}
		}
		// Each term is in parentheses or a CASE: | and << bind alike,
		// from the left.
		words = append(words, strings.Join(word, " | "))
	}
	return bits, words
}

// bitSQL is bit k of a flag word, set where fact is true (NULL is no
// fact). A CASE costs less than the boolean coalesced, cast and shifted:
// 167 against 190 ms for the benchmark's eighteen terms over a million
// rows.
func bitSQL(fact string, k int) string {
	return "CASE WHEN " + fact + " THEN " + strconv.FormatUint(1<<k, 10) + "::UBIGINT ELSE 0::UBIGINT END"
}

// loadTyped reads the file into table t by plan: checked columns cast,
// the others as text, and the flags of each 64 bits of the layout as one
// more column, whose names it returns. It returns the rows the reader
// left out, and false, having dropped t, when the file must go through
// Go. The table is created first, so that a column may have its
// compression (planned.compression), then filled by one INSERT, which
// keeps the file's order as CREATE TABLE AS does.
func (s *Store) loadTyped(ctx context.Context, conn *sql.Conn, t *catalog.Table, keys []string, plan []planned, words []string, r directRead) ([]string, RowStats, bool, error) {
	defs := make([]string, len(plan))
	sel := make([]string, len(plan))
	inner := make([]string, len(plan))
	for i, p := range plan {
		c := readOf(i)
		defs[i] = ducksql.Ident(keys[i]) + " " + sqlTypeName(p.d)
		if p.compression != "" {
			defs[i] += " USING COMPRESSION " + p.compression
		}
		sel[i], inner[i] = p.stored(c), p.inner(c)
	}
	flags := flagNames(keys, len(words))
	for j, name := range flags {
		defs = append(defs, ducksql.Ident(name)+" UBIGINT")
		sel = append(sel, words[j])
	}
	table := `data.` + ducksql.Ident(t.ID)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE `+table+` (`+strings.Join(defs, ", ")+`)`); err != nil {
		return nil, RowStats{}, false, classify(ctx, err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO `+table+` SELECT `+strings.Join(sel, ", ")+` FROM (SELECT `+strings.Join(inner, ", ")+` FROM `+r.read+`)`); err != nil {
		return nil, RowStats{}, false, readerRefused(ctx, err, t.Ordinal)
	}
	stats, ok, err := r.after()
	if err != nil || !ok {
		if _, dropErr := conn.ExecContext(ctx, `DROP TABLE data.`+ducksql.Ident(t.ID)); dropErr != nil && err == nil {
			err = classify(ctx, dropErr)
		}
		return nil, RowStats{}, false, err
	}
	return flags, stats, true, nil
}

// summary is one scan of a loaded table: its rows, how many values have
// each bit of the fact layout, and the aggregates of each checked column.
type summary struct {
	rows    int64
	counts  map[factBit]int64
	checked map[int]checkedSummary
	// failed lists the checked columns where some value failed.
	failed []int
}

// checkedSummary is what the stored values of a checked column tell: how
// many there are, and of numbers, how many are below zero and the
// largest magnitude.
type checkedSummary struct {
	values, negative int64
	maxAbs           string
}

// count is how many values of column col have fact f.
func (sum summary) count(col int, f fact) int64 { return sum.counts[factBit{col, f}] }

// summarize scans table t twice in one statement, each scan cheap and
// on every thread: its flag columns grouped by their words, of which a
// file has few, each bit then summed over the groups; and its rows and
// checked columns, whose typed values are cheap to count and compare.
// (One grouped scan of both costs more than the two: every row then
// updates every aggregate through its group.) A screened column where
// some value failed is marked screenNone.
func (s *Store) summarize(ctx context.Context, conn *sql.Conn, t *catalog.Table, keys []string, plan []planned, layout []factBit, flags []string) (summary, error) {
	table := `data.` + ducksql.Ident(t.ID)
	aggs := []string{"count(*)"}
	var checked []int
	for i, p := range plan {
		if !readChecked(p.d) {
			continue
		}
		k := ducksql.Ident(keys[i])
		aggs = append(aggs, "count("+k+")")
		if p.d.Type == typing.TypeInteger || p.d.Type == typing.TypeDecimal {
			aggs = append(aggs, "count_if("+k+" < 0)::BIGINT", "max(abs("+k+"))::VARCHAR")
		}
		checked = append(checked, i)
	}
	q := `SELECT ` + strings.Join(aggs, ", ") + ` FROM ` + table
	if len(flags) > 0 {
		words := make([]string, len(flags))
		names := make([]string, len(flags))
		for j, name := range flags {
			words[j], names[j] = ducksql.Ident(name), "w"+strconv.Itoa(j)
		}
		sums := make([]string, len(layout))
		for b := range layout {
			sums[b] = "(sum(n) FILTER (WHERE (w" + strconv.Itoa(b/64) + " >> " + strconv.Itoa(b%64) + ") & 1 = 1))::BIGINT"
		}
		q = `SELECT * FROM (` + q + `), (SELECT ` + strings.Join(sums, ", ") + ` FROM (SELECT ` + strings.Join(words, ", ") + `, count(*) FROM ` + table +
			` GROUP BY ALL) AS g(` + strings.Join(names, ", ") + `, n))`
	}
	vals := make([]sql.NullString, len(aggs)+len(layout))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := conn.QueryRowContext(ctx, q).Scan(ptrs...); err != nil {
		return summary{}, classify(ctx, err)
	}
	num := func(v sql.NullString) int64 { n, _ := strconv.ParseInt(v.String, 10, 64); return n }
	sum := summary{rows: num(vals[0]), counts: make(map[factBit]int64, len(layout)), checked: make(map[int]checkedSummary, len(checked))}
	t.RowCount = sum.rows
	rest := vals[1:]
	for _, i := range checked {
		c := checkedSummary{values: num(rest[0]), maxAbs: "0"}
		rest = rest[1:]
		if typ := plan[i].d.Type; typ == typing.TypeInteger || typ == typing.TypeDecimal {
			c.negative = num(rest[0])
			if rest[1].Valid {
				c.maxAbs = rest[1].String
			}
			rest = rest[2:]
		}
		sum.checked[i] = c
	}
	for b, bit := range layout {
		n := num(rest[b])
		sum.counts[bit] = n
		if bit.f != factFail || n == 0 {
			continue
		}
		if readChecked(plan[bit.col].d) {
			sum.failed = append(sum.failed, bit.col)
		} else {
			plan[bit.col].screen = screenNone
		}
	}
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
// of all its values: checked columns and screened text columns from the
// sums of their flags, other text columns by the SQL pass
// over the stored text. It drops the flag columns, and converts in place
// a text column that decides a type. It returns false, having dropped t,
// when a checked column decides otherwise than planned or a cell is too
// long: the staged path then loads the file, or names the cell.
func (s *Store) settleDirect(ctx context.Context, conn *sql.Conn, t *catalog.Table, src TableSource, keys []string, plan []planned, flags []string, sum summary) ([]typing.Decision, bool, error) {
	table := "data." + ducksql.Ident(t.ID)
	drop := func() ([]typing.Decision, bool, error) {
		if _, err := conn.ExecContext(ctx, `DROP TABLE `+table); err != nil {
			return nil, false, classify(ctx, err)
		}
		return nil, false, nil
	}
	for _, name := range flags {
		if _, err := conn.ExecContext(ctx, `ALTER TABLE `+table+` DROP COLUMN `+ducksql.Ident(name)); err != nil {
			return nil, false, classify(ctx, err)
		}
	}
	if sum.count(-1, factLong) > 0 {
		return drop()
	}
	cols := make([]typing.Stats, len(plan))
	var open []string
	var openAt []int
	for i, p := range plan {
		st, ok := p.stats(sum.checked[i], func(f fact) int64 { return sum.count(i, f) })
		if !ok {
			open, openAt = append(open, ducksql.Ident(keys[i])), append(openAt, i)
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
	for i := range cols {
		// The stored text is trimmed: what it lost was counted as read.
		cols[i].Blank, cols[i].Padded = sum.count(i, factBlank), sum.count(i, factPadded)
	}
	decisions := decideColumns(src, keys, cols, nil)
	for i, d := range decisions {
		p := plan[i].d
		switch {
		case readChecked(p) && (d.Type != p.Type || d.SQLType != p.SQLType || !readChecked(d)):
			return drop()
		case !readChecked(p) && d.Type != typing.TypeText && plan[i].compression != "":
			// A column stored with a text compression cannot change type
			// in place; it rarely happens (a failed screen).
			return drop()
		case !readChecked(p) && d.Type != typing.TypeText:
			k := ducksql.Ident(keys[i])
			if _, err := conn.ExecContext(ctx, `ALTER TABLE `+table+` ALTER COLUMN `+k+` SET DATA TYPE `+sqlTypeName(d)+` USING `+ducksql.TextCast(d, k)); err != nil {
				return nil, false, classify(ctx, err)
			}
		}
	}
	return decisions, true, nil
}

// plainNumbersPattern is quick codes 1, 4 and 5 (of at most 16
// characters): a whole number as int64 prints it, a decimal without
// superfluous zeros before its point, digits with a leading zero.
const plainNumbersPattern = quickIntPattern + `|-?(0|[1-9][0-9]*)\.[0-9]+|0[0-9]{1,14}`

// stats returns the counts the quick pass would make of the column, from
// the summary of a checked one, or the count of each fact of a screened
// one; or false when only that pass can tell them.
//
// A screened column keeps its sample's decision of text but in one case:
// plain numbers with decimals and no leading zero decide a number
// whatever the column's name (unless its hint says they are text), and
// only the pass can tell its width and places. Else counts that only choose between numeric types are left
// out: the width and places of numbers, and booleans (the sample holds a
// value that is not one). So is the number of values, which is not
// counted: what decides the text column is whether it has values (the
// sample holds some) and how many of them are of each kind against the
// others. n stands in for it, whole numbers counted as the sample's
// values, which keeps those relations.
func (p planned) stats(c checkedSummary, count func(fact) int64) (typing.Stats, bool) {
	if readChecked(p.d) {
		whole, _, _ := strings.Cut(c.maxAbs, ".")
		return checkedStats(p.d, c.values, c.negative, int64(len(whole))), true
	}
	switch p.screen {
	case screenText:
		return typing.Stats{N: p.sampled}, true
	case screenNumbers, screenDigits:
		// Every value passed the screen: one with a point is a decimal,
		// one from "00" to below "1" has a leading zero, one with a minus
		// sign is below zero.
		decs, lead, negative := count(factPoint), count(factLead), count(factNegative)
		if decs > 0 && lead == 0 && !p.noNumbers {
			return typing.Stats{}, false
		}
		n := p.sampled + decs + lead
		return typing.Stats{N: n, Ints: p.sampled, Decs: decs, Lead: lead, Digits: n - negative, Trimmed: true}, true
	}
	return typing.Stats{}, false
}

// allDigits reports whether the screen found every value of a column
// that stayed text digits alone: one of 1 to 15 digits passes the
// digits' screen, and a plain number without a sign or a point is
// digits.
func (p planned) allDigits(count func(fact) int64) bool {
	switch p.screen {
	case screenDigits:
		return true
	case screenNumbers:
		return count(factNegative) == 0 && count(factPoint) == 0
	}
	return false
}

// digits is what the load's facts tell of an identifier column whose
// values are all digits (allDigits), which measureDigits then need not
// read again: of one length, or of several with a leading zero or none.
// The screens pass at most 16 characters, well within an unsigned
// 128-bit number; the sample had values, so the column has some.
func (p planned) digits(count func(fact) int64) catalog.Digits {
	switch {
	case count(factLength) == 0:
		return catalog.DigitsFixed
	case count(factLead) == 0:
		return catalog.DigitsPlain
	}
	return catalog.DigitsVarying
}

// checkedStats rebuilds the counts the quick pass makes of a checked
// column whose every value passed its check, from the stored values: n
// of them, negative below zero, the widest of intDigits whole digits.
// A decimal's scale is the planned one: every value has at most that
// many places, and the sample holds one with that many.
func checkedStats(d typing.Decision, n, negative, intDigits int64) typing.Stats {
	switch d.Type {
	case typing.TypeInteger:
		return typing.Stats{N: n, Ints: n, IntDigits: intDigits, Digits: n - negative, Trimmed: true}
	case typing.TypeDecimal:
		_, scale := catalog.DecimalParts(d.SQLType)
		// Some value is written with places: the sample's.
		return typing.Stats{N: n, Decs: n, IntDigits: intDigits, Scale: int64(scale), Digits: n - negative, Trimmed: true}
	case typing.TypeDate:
		return typing.Stats{N: n, Dates: n, Stamps: n, Trimmed: true}
	}
	return typing.Stats{N: n, Bools: n}
}

// sqlTypeName is the SQL type the decision's expression gives.
func sqlTypeName(d typing.Decision) string { return catalog.SQLTypeOf(d.Type, d.SQLType) }
