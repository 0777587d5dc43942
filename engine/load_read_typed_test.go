package engine

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// directColumn is one column of a generated file: its value in row i of
// the first rows, and what comes after them.
type directColumn struct {
	name  string
	value func(i int) string
	late  []string
}

// directFile writes a CSV file whose columns hold their first values for
// more rows than the direct load samples, then their late values.
func directFile(cols []directColumn) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	header := make([]string, len(cols))
	lates := 0
	for i, c := range cols {
		header[i] = c.name
		lates = max(lates, len(c.late))
	}
	w.Write(header)
	first := sampleRows + 500
	for r := 0; r < first+lates; r++ {
		row := make([]string, len(cols))
		for i, c := range cols {
			switch {
			case r < first:
				row[i] = c.value(r)
			case r-first < len(c.late):
				row[i] = c.late[r-first]
			default:
				row[i] = c.value(r)
			}
		}
		w.Write(row)
	}
	w.Flush()
	return b.String()
}

// directCases hold, past the sample, a value that changes what the
// column is, or a value that does not; and columns the load keeps as text
// until it has counted them.
var directCases = map[string][]directColumn{
	"checked columns fail late": {
		{"yield", func(i int) string { return fmt.Sprintf("0.%04d", 100+i%9000) }, []string{"3.6e-05"}},
		{"qty", func(i int) string { return fmt.Sprint(i % 50) }, []string{"N/A"}},
		{"day", func(i int) string { return fmt.Sprintf("2024-01-%02d", 1+i%28) }, []string{"2024-13-01"}},
		{"price", func(i int) string { return fmt.Sprintf("%d.%02d", i%900, i%100) }, []string{"12.345"}},
		{"ok", func(i int) string { return []string{"true", "false"}[i%2] }, []string{" TRUE"}},
		{"count", func(i int) string { return fmt.Sprint(i) }, []string{"-0"}},
		{"rate", func(i int) string { return fmt.Sprintf("%d.%05d", i, i%7) }, []string{"12345678901234.5"}},
	},
	"checked columns hold": {
		{"big", func(i int) string { return fmt.Sprintf("%d.5", i) }, []string{"123456789012.5"}},
		{"neg", func(i int) string { return fmt.Sprint(i) }, []string{"-42", ""}},
		{"dd_check_0", func(i int) string { return fmt.Sprint(i % 7) }, nil},
		{"DD_CHECK_1", func(i int) string { return fmt.Sprintf("2020-02-%02d", 1+i%29) }, nil},
	},
	"screened columns": {
		{"postcode", func(i int) string { return fmt.Sprintf("%05d", 10000+i) }, []string{"09645"}},
		{"order_no", func(i int) string { return fmt.Sprintf("%08d", i) }, []string{"X-1"}},
		{"word", func(i int) string { return []string{"North", "south", "East"}[i%3] }, []string{"123"}},
		{"code", func(i int) string { return []string{"USDX", "Euro", "£ sign"}[i%3] }, nil},
		{"mixed", func(i int) string { return fmt.Sprintf("%d.%d", i, i%10) }, []string{"007"}},
		{"zip", func(i int) string { return fmt.Sprintf("%05d", i%1000) }, []string{"00001", "", "7"}},
		{"id", func(i int) string { return fmt.Sprint(i - 5) }, []string{"1.5"}},
		{"code_id", func(i int) string { return fmt.Sprint(i) }, []string{"2.25"}},
		{"zip_signed", func(i int) string { return fmt.Sprintf("%05d", i%1000) }, []string{"-5"}},
		{"zip_long", func(i int) string { return fmt.Sprintf("%05d", i%1000) }, []string{"1234567890123456"}},
		{"zip_point", func(i int) string { return fmt.Sprintf("%05d", i%1000) }, []string{"0.5"}},
		{"lower", func(i int) string { return []string{"fast", "gift"}[i%2] }, []string{"$5"}},
		{"accents", func(i int) string { return []string{"fast", "Ünïcode"}[i%2] }, []string{"¥5"}},
	},
	"text until counted": {
		{"sparse", func(int) string { return "" }, []string{"42"}},
		{"sparse_day", func(int) string { return "" }, []string{"2024-03-01"}},
		{"dmy", func(i int) string { return fmt.Sprintf("%d/%d/2024", 1+i%28, 1+i%12) }, []string{"31/12/2024"}},
		{"at", func(i int) string { return fmt.Sprintf("2024-03-01T10:00:%02d.123Z", i%60) }, nil},
		{"money", func(i int) string { return fmt.Sprintf("$%d,%03d.50", 1+i%9, i%1000) }, nil},
		{"ambiguous", func(i int) string { return fmt.Sprintf("%d/%d/2024", 1+i%12, 1+i%12) }, []string{"13/1/2024"}},
	},
}

// screenedDigits are what the loads find of screened identifiers' digits.
var screenedDigits = map[string]catalog.Digits{
	"postcode": catalog.DigitsFixed, "zip": catalog.DigitsVarying, "order_no": catalog.DigitsUnknown,
	"zip_long": catalog.DigitsVarying, "zip_signed": catalog.DigitsUnknown,
}

// TestDirectSameAsStaged loads each file three ways: directly (types
// decided from a sample and proved as the file is read), staged as text
// and classified in SQL, and through the Go row stream. Every column gets
// the same type, identifier mark and reason, the same finding of an
// identifier's digits (the direct load takes it from its screen), and
// every value the same stored form, whatever comes after the sample.
func TestDirectSameAsStaged(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	for name, cols := range directCases {
		content := directFile(cols)
		for _, format := range []string{"csv", "json"} {
			t.Run(name+" "+format, func(t *testing.T) {
				var got [3]*catalog.Table
				var rows [3]string
				for i, way := range []string{"direct", "staged", "go"} {
					var src TableSource
					if format == "csv" {
						path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
						if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
							t.Fatal(err)
						}
						src = csvSourceOf(t, path, way != "go")
						if way == "direct" {
							// As ingest gives it: the row stream beside
							// the file, of which the load samples the
							// first rows.
							src.Rows = csvSourceOf(t, path, false).Rows
						}
					} else {
						src, _ = jsonSourceOf(t, s.IncomingDir(), content, way != "go")
					}
					s.staged = way == "staged"
					f, err := s.AddFile(ctx, NewFile{Filename: "t." + format, TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
					s.staged = false
					if err != nil {
						t.Fatalf("%s: %v", way, err)
					}
					got[i] = &f.Tables[0]
					rows[i] = allRows(t, s, got[i])
				}
				for w := 1; w < 3; w++ {
					for j, want := range got[w].Columns {
						if c := got[0].Columns[j]; c != want {
							t.Errorf("column %s: direct %s %v %q digits %d, %s %s %v %q digits %d", want.Key, c.Type, c.Identifier, c.Reason, c.Digits,
								[]string{"", "staged", "go"}[w], want.Type, want.Identifier, want.Reason, want.Digits)
						}
					}
					for _, c := range got[w].Columns {
						if want, ok := screenedDigits[c.Key]; ok && name == "screened columns" && c.Digits != want {
							t.Errorf("column %s (%s): digits %d, want %d", c.Key, []string{"direct", "staged", "go"}[w], c.Digits, want)
						}
					}
					if rows[0] != rows[w] {
						t.Errorf("rows differ from %s:\ndirect %.300s\nother  %.300s", []string{"", "staged", "go"}[w], rows[0], rows[w])
					}
				}
			})
		}
	}
}

// allRows returns every row of t, in file order, as text.
func allRows(t *testing.T, s *Store, tb *catalog.Table) string {
	t.Helper()
	var b strings.Builder
	for off := int64(0); off < tb.RowCount; off += catalog.MaxPageSize {
		p, err := s.Rows(context.Background(), tb.ID, catalog.PageRequest{Offset: off, Limit: catalog.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%#v", p.Rows)
	}
	return b.String()
}

// TestDirectLongCellLate names a cell over the limit that comes after the
// sample, as the staged path does, in a column kept as text, screened as
// digits or as numbers, or checked as booleans (whose check trims).
func TestDirectLongCellLate(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	long := strings.Repeat("x", MaxCellChars+1)
	for _, col := range []directColumn{
		{"note", func(int) string { return "short" }, []string{long}},
		{"zip", func(i int) string { return fmt.Sprintf("%05d", i%1000) }, []string{long}},
		{"ref", func(i int) string { return fmt.Sprintf("%05d", i%1000-500) }, []string{long}},
		{"ok", func(i int) string { return []string{"true", "false"}[i%2] }, []string{strings.Repeat(" ", MaxCellChars) + "true"}},
	} {
		content := directFile([]directColumn{{"id", func(i int) string { return fmt.Sprint(i) }, nil}, col})
		path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.AddFile(context.Background(), NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{csvSourceOf(t, path, true)}})
		want := fmt.Sprintf("row %d, column 2 has a cell of %d characters", sampleRows+501, len(col.late[0]))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error naming %q", col.name, err, want)
		}
	}
}

// TestWideFile loads a wide file, text, numbers, dates and screened codes
// side by side, within the test engine's 256 MB: read by DuckDB alone, in
// one statement (its first rows are fewer, as its sample is bounded by
// values), and as ingest gives it, wider than directWidth, through Go.
func TestWideFile(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	const width = 128
	cols := make([]directColumn, width)
	for i := range cols {
		switch i % 4 {
		case 0:
			cols[i] = directColumn{fmt.Sprintf("n%d", i), func(r int) string { return fmt.Sprint(r % 97) }, nil}
		case 1:
			cols[i] = directColumn{fmt.Sprintf("w%d", i), func(r int) string { return []string{"alpha", "Beta", "gamma"}[r%3] }, nil}
		case 2:
			cols[i] = directColumn{fmt.Sprintf("d%d", i), func(r int) string { return fmt.Sprintf("2024-02-%02d", 1+r%28) }, []string{"2024-02-30"}}
		default:
			cols[i] = directColumn{fmt.Sprintf("z%d", i), func(r int) string { return fmt.Sprintf("%05d", r%1000) }, nil}
		}
	}
	if got := sampleSize(width); got != sampleValues/width {
		t.Errorf("sample of %d rows for %d columns, want %d", got, width, sampleValues/width)
	}
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(directFile(cols)), 0o600); err != nil {
		t.Fatal(err)
	}
	both := csvSourceOf(t, path, false)
	both.CSV = &CSVFile{Path: path, Delimiter: ','}
	for _, src := range []TableSource{csvSourceOf(t, path, true), both} {
		f, err := s.AddFile(context.Background(), NewFile{Filename: "wide.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
		if err != nil {
			t.Fatal(err)
		}
		got := f.Tables[0]
		if len(got.Columns) != width || got.RowCount != sampleRows+501 {
			t.Fatalf("got %d columns, %d rows", len(got.Columns), got.RowCount)
		}
		// A late impossible date keeps its column text.
		for i, want := range []string{typing.TypeInteger, typing.TypeText, typing.TypeText, typing.TypeText} {
			if c := got.Columns[i]; c.Type != want {
				t.Errorf("column %s: %s (%s), want %s", c.Key, c.Type, c.Reason, want)
			}
		}
	}
}

// TestDirectLoadKeepsFileOrder loads a file large enough for DuckDB's
// reader to split among threads (it hands each about 8 MB), into a table
// created first and filled by INSERT; the engine's row numbers follow the
// file's lines.
func TestDirectLoadKeepsFileOrder(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 400_000
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "line,order_id,region,note")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(w, "%d,%010d,%s,%s\n", i, i*7919%rows, []string{"North", "South", "East"}[i%3], strings.Repeat("x", i%40))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	src := csvSourceOf(t, path, true)
	src.Rows = csvSourceOf(t, path, false).Rows
	f, err := s.AddFile(context.Background(), NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if tb.RowCount != rows || tb.Columns[0].Type != typing.TypeInteger {
		t.Fatalf("%d rows, line %s", tb.RowCount, tb.Columns[0].Type)
	}
	var misplaced int64
	err = s.db.QueryRow(`SELECT count(*) FILTER (WHERE "line" <> n - 1) FROM (SELECT "line", row_number() OVER (ORDER BY rowid) AS n FROM data.` + ducksql.Ident(tb.ID) + `)`).Scan(&misplaced)
	if err != nil {
		t.Fatal(err)
	}
	if misplaced != 0 {
		t.Errorf("%d of %d rows out of file order", misplaced, rows)
	}
	p, err := s.Rows(context.Background(), tb.ID, catalog.PageRequest{Offset: rows - 2, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.Rows[1][0]); got != fmt.Sprint(rows-1) {
		t.Errorf("last row's line %s, want %d", got, rows-1)
	}
}

// TestScreensAsTheirPatterns holds the screens of text columns and the
// checks of whole numbers and decimals, whose SQL is written for speed,
// to the patterns they stand for, over every ASCII first character and
// the edges of each.
func TestScreensAsTheirPatterns(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	values := []string{"", "0", "7", "007", "123456789012345", "1234567890123456", "12a", "-5", "5.0", " 5", "5 ",
		"€5", "£", "¥1", "é", "Ünïcode", "ﬁne", "Usd", "usd 5", "USDX", "EURO", "USD 5", "USD5", "AUD", "AB", "Ab", "A", "ZAR-5", "\u00a05", "zz",
		"0.00", "-0.00", "0.0", "-0.5", "-0", "1.50", "1.5", "1.505", "12", "-12.34", "012.34", "1e2", " 1.50", "1.50 ", "+1.50",
		"99999999999999.99", "999999999999999.9", "1234567890123456.7",
		"-123456789012345", "-1234567890123456", "999999999999999", "-", "--5", "-05", "-5-", "1_000", "+5", "5-", "9:", "9a", "1 2", "10", "100",
		"AÉ", "ZZ", "Z[", "@A", "[A", "A1", "0.10", "0.1234", "12.3400", "1.", ".5", "1_000.00", "１２.５", "NaN", "inf"}
	for c := 1; c < 128; c++ {
		values = append(values, string(rune(c))+"a", string(rune(c)))
	}
	for _, c := range typing.CurrencySigns {
		values = append(values, c+"5", c+" 5", c)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE v (c1 VARCHAR)`); err != nil {
		t.Fatal(err)
	}
	for _, v := range append(values, "NULL") {
		arg := any(v)
		if v == "NULL" {
			arg = nil
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO v VALUES (?)`, arg); err != nil {
			t.Fatal(err)
		}
	}
	x := ducksql.StageColumn(1)
	// A decimal's pattern, and a value the type holds.
	decimal := func(sqlType, places string) string {
		return "NOT coalesce(" + x + " IS NULL OR " + x + " = '' OR strlen(" + x + ") <= 16 AND regexp_full_match(" + x + ", " +
			ducksql.Literal(quickIntPattern+`|-?(0|[1-9][0-9]*)\.[0-9]{1,`+places+`}`) + ") AND TRY_CAST(" + x + " AS " + sqlType + ") IS NOT NULL, false)"
	}
	for _, tc := range []struct {
		p    planned
		want string // the pattern it stands for: true where a value fails
	}{
		{planned{d: typing.Decision{Type: typing.TypeText}, screen: screenText}, x + " <> '' AND " + quickMaybeSQL(x)},
		{planned{d: typing.Decision{Type: typing.TypeText}, screen: screenDigits}, x + " <> '' AND NOT regexp_full_match(" + x + ", '[0-9]{1,15}')"},
		{planned{d: typing.Decision{Type: typing.TypeInteger}}, x + " <> '' AND NOT regexp_full_match(" + x + ", " + ducksql.Literal(quickIntPattern) + ")"},
		{planned{d: typing.Decision{Type: typing.TypeDecimal, SQLType: "DECIMAL(18,2)"}}, decimal("DECIMAL(18,2)", "2")},
		{planned{d: typing.Decision{Type: typing.TypeDecimal, SQLType: "DECIMAL(10,4)"}}, decimal("DECIMAL(10,4)", "4")},
		{planned{d: typing.Decision{Type: typing.TypeDecimal, SQLType: "DECIMAL(18,1)"}}, decimal("DECIMAL(18,1)", "1")},
	} {
		got := tc.p.factSQL(factFail, readColumn{raw: x, edge: ducksql.Edge(x), cast: castSQL(tc.p.d, x)})
		rows, err := conn.QueryContext(ctx, `SELECT c1, coalesce(`+got+`, false), coalesce(`+tc.want+`, false) FROM v WHERE coalesce(`+got+`, false) <> coalesce(`+tc.want+`, false)`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v *string
			var g, w bool
			if err := rows.Scan(&v, &g, &w); err != nil {
				t.Fatal(err)
			}
			t.Errorf("%s screen %d: %q fails %v, its pattern %v", sqlTypeName(tc.p.d), tc.p.screen, deref(v), g, w)
		}
		rows.Close()
	}
}

func deref(v *string) string {
	if v == nil {
		return "NULL"
	}
	return *v
}

// TestReadersUnderKeyValueFolder loads a CSV and a JSON file through
// DuckDB's readers, both ways, from a data folder inside one named like
// key=value, which DuckDB would take for a hive partition (a column more).
func TestReadersUnderKeyValueFolder(t *testing.T) {
	e, err := New(Config{Dir: filepath.Join(t.TempDir(), "rows=10"), MemoryLimit: "256MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := acquire(t, e, datadesk.NewID("u"))
	content := "id,amount\n1,2.50\n2,3.75\n"
	for _, staged := range []bool{false, true} {
		for _, format := range []string{"csv", "json"} {
			var src TableSource
			if format == "csv" {
				path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				src = csvSourceOf(t, path, true)
			} else {
				src, _ = jsonSourceOf(t, s.IncomingDir(), content, true)
			}
			s.staged = staged
			f, err := s.AddFile(context.Background(), NewFile{Filename: "t." + format, TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
			s.staged = false
			if err != nil {
				t.Fatalf("%s, staged %v: %v", format, staged, err)
			}
			if tb := f.Tables[0]; len(tb.Columns) != 2 || tb.RowCount != 2 || tb.Columns[1].Type != typing.TypeDecimal {
				t.Errorf("%s, staged %v: %d columns %v, %d rows", format, staged, len(tb.Columns), tb.Columns, tb.RowCount)
			}
		}
	}
}

// TestScreenedDecimalsNeedThePass: plain numbers kept as text that turn
// out to hold decimals and no leading zero decide a number, whose width
// and places only the full pass tells; unless the file says they are
// text (JSON strings), when the sums settle the column.
func TestScreenedDecimalsNeedThePass(t *testing.T) {
	counts := map[fact]int64{factPoint: 3}
	count := func(f fact) int64 { return counts[f] }
	for _, tc := range []struct {
		noNumbers bool
		lead      int64
		settled   bool
	}{{false, 0, false}, {true, 0, true}, {false, 2, true}} {
		counts[factLead] = tc.lead
		p := planned{d: typing.Decision{Type: typing.TypeText}, screen: screenNumbers, sampled: 10, noNumbers: tc.noNumbers}
		if _, ok := p.stats(checkedSummary{}, count); ok != tc.settled {
			t.Errorf("no numbers %v, %d leading zeros: settled %v, want %v", tc.noNumbers, tc.lead, ok, tc.settled)
		}
	}
}

// TestBlankCellsOfCheckedColumns: a cell of only spaces in a column the
// load casts and checks (whole numbers, decimals, ISO dates, booleans)
// fails the check, which counts no blanks of its own: the column is read
// again and the report still counts the cell, stored empty, beside the
// trimmed text of a text column.
func TestBlankCellsOfCheckedColumns(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	var b strings.Builder
	b.WriteString("qty,amount,day,flag,name\n")
	const rows = 10000 // the blanks past the first rows the plan is made from
	for i := range rows {
		blank := func(col int, v string) string {
			if i == 9100+col || i == 9500 && col == 3 {
				return "   "
			}
			return v
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s\n", blank(0, fmt.Sprint(i)), blank(1, fmt.Sprintf("%d.50", i)), blank(2, "2020-01-02"), blank(3, "true"), "  n"+fmt.Sprint(i%3))
	}
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "b.csv", TempPath: path, Tables: []TableSource{csvSourceOf(t, path, true)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.Tables[0].Report.Columns {
		got = append(got, fmt.Sprintf("%s %s blank %d trimmed %d", c.Key, c.Type, c.BlankCells, c.TrimmedValues))
	}
	want := []string{"qty integer blank 1 trimmed 0", "amount decimal blank 1 trimmed 0", "day date blank 1 trimmed 0",
		"flag boolean blank 2 trimmed 0", "name text blank 0 trimmed 10000"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("report:\n%s\nwant\n%s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	res := ask(t, s, catalog.Query{FileID: f.ID, Filters: []catalog.Filter{{Column: "qty", Op: "is_null", Value: true}}})
	if res.MatchedRowCount != 1 {
		t.Errorf("empty qty: %d rows, want 1", res.MatchedRowCount)
	}
}
