package ingest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
)

// valuesOf is a dumped row's values, without their kinds, as the report
// joins them.
func valuesOf(cells []string) string {
	var parts []string
	for _, c := range cells {
		if _, v, ok := strings.Cut(c, ":"); ok {
			c = v
		}
		if c = strings.TrimSpace(c); c != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, " | ")
}

// TestFoundTablesLoseNothing reads every workbook of the corpus as it is
// (the reading TestAgainstReferenceReaders holds to openpyxl and xlrd)
// and with its tables found: every row of each sheet read as it is is,
// with its number, a header row, a data row (the same cells) or a row
// the report lists as kept out (the same text) of exactly one found
// table; nothing is dropped unsaid. The sheets whose reading differs
// from the literal one are the ones named in foundDiffer, for the
// reason it gives.
func TestFoundTablesLoseNothing(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(sheetjsDir(), "*.xls*"))
	differ := map[string]bool{}
	for _, p := range files {
		literal, err := dumpWorkbook(t, literalIngester(), p)
		if err != nil {
			continue
		}
		tables, err := dumpWorkbook(t, testIngester(), p)
		if err != nil {
			t.Errorf("%s: read as it is, not with its tables found: %v", filepath.Base(p), err)
			continue
		}
		for _, l := range literal {
			want := map[int64]string{int64(l.headerRows[0]): valuesOf(l.header)}
			for i, r := range l.rows {
				want[l.nums[i]] = valuesOf(r)
			}
			got := map[int64]string{}
			put := func(row int64, v string) {
				if _, dup := got[row]; dup {
					t.Errorf("%s %q: row %d is in two places", filepath.Base(p), l.name, row)
				}
				got[row] = v
			}
			found := 0
			for _, d := range tables {
				if d.sheet != l.name {
					continue
				}
				found++
				for _, hr := range d.headerRows {
					put(int64(hr), want[int64(hr)])
				}
				sections := len(d.header) > 0 && d.header[0] == "Section"
				for i, r := range d.rows {
					if sections {
						r = r[1:]
					}
					put(d.nums[i], valuesOf(r))
				}
				for _, s := range d.skipped {
					put(s.Row, s.Text)
				}
			}
			key := filepath.Base(p) + "|" + l.name
			if found != 1 || len(got) != len(want) || got[int64(l.headerRows[0])] != want[int64(l.headerRows[0])] {
				differ[key] = true
			}
			for row, v := range want {
				if got[row] != v {
					t.Errorf("%s %q row %d: found %q, the sheet %q", filepath.Base(p), l.name, row, got[row], v)
				}
			}
			for _, d := range tables {
				if d.sheet == l.name && len(d.skipped) > 0 {
					differ[key] = true
				}
			}
		}
	}
	for key := range differ {
		if _, ok := foundDiffer[key]; !ok {
			t.Errorf("%s: read otherwise than as it is, and not among the sheets expected to", key)
		}
	}
	for key := range foundDiffer {
		if !differ[key] {
			t.Errorf("%s: expected to be read otherwise than as it is, but is not", key)
		}
	}
}

// foundDiffer are the corpus sheets whose found tables are not the sheet
// read as it is, and why.
var foundDiffer = map[string]string{}

func init() {
	for _, ext := range []string{".xls", ".xlsx"} {
		foundDiffer["formula_stress_test"+ext+"|Database"] = "a table of criteria (Database, DAVERAGE ...) above a blank row, a title Data and a table of its own"
		foundDiffer["formula_stress_test"+ext+"|Engineering"] = "a second block of functions under a header of its own after a blank row (Complex)"
		foundDiffer["formula_stress_test"+ext+"|Finance"] = "four blocks, each under a header naming its functions' arguments (rate, nper, pmt, pv)"
		foundDiffer["metadata_2019"+ext+"|Sheet1"] = "a small table (Geography, Leaders) above a larger one (Stock, High, Low); Dynamic Array, a label alone, kept out"
		foundDiffer["pivot_table_named_range"+ext+"|PTRange"] = "a pivot table's filter (Foo, (All)) above the pivot table"
		foundDiffer["pivot_table_named_range"+ext+"|PTTable"] = "a pivot table's caption row (Count of Quux, Column Labels) above its header"
		foundDiffer["pivot_table_named_range"+ext+"|PTWithLabelFilter"] = "a pivot table's filter (Foo, (Multiple Items)) above the pivot table"
	}
	for _, ext := range []string{".xls", ".xlsm"} {
		for _, sheet := range []string{"PTCompact", "PTTabular", "PTOutline"} {
			foundDiffer["pivot_table_test"+ext+"|"+sheet] = "a pivot table's caption row (Sum of Sales, Column Labels) above its header (Row Labels, Qtr3, ...)"
		}
	}
	foundDiffer["issue.xlsx|test"] = "Type code, a label alone under the numbered positions, kept out as a section"
}

// TestTitlesAndNotesKeptOut: a sheet with a title and notes above its
// header, a blank row, and notes under its data had its title as the
// header and every column text. The header is now the row over the data,
// the rest is listed in the report, and the columns are typed.
func TestTitlesAndNotesKeptOut(t *testing.T) {
	rows := [][]any{
		{"Lots of people"},
		{"simply cannot resist writing"},
		{"at the top of their spreadsheets"},
		{},
		{"country", "year", "price", "day"},
	}
	for i := range 12 {
		rows = append(rows, []any{fmt.Sprintf("C%d", i%4), 2000 + i, 1.5 * float64(i+1), excelDate(2024, 1, 1+i)})
	}
	rows = append(rows, []any{}, []any{"Source: a statistics office, 2024 edition"}, []any{"* provisional figures"})
	wb := excelize.NewFile()
	style, _ := wb.NewStyle(&excelize.Style{NumFmt: 14})
	for i, r := range rows {
		cell := fmt.Sprintf("A%d", i+1)
		if err := wb.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
		if len(r) == 4 && i > 4 {
			wb.SetCellStyle("Sheet1", fmt.Sprintf("D%d", i+1), fmt.Sprintf("D%d", i+1), style)
		}
	}
	var b bytes.Buffer
	if err := wb.Write(&b); err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t)
	f, err := fx.ingestBytes("titled.xlsx", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if got := columnTypes(tb.Columns); got != "country text, year integer, price decimal, day date" {
		t.Errorf("columns: %s", got)
	}
	if tb.RowCount != 12 {
		t.Errorf("%d rows, want 12", tb.RowCount)
	}
	var skipped []string
	for _, s := range tb.Report.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d %s %s", s.Row, s.Where, s.Text))
	}
	want := []string{"1 above Lots of people", "2 above simply cannot resist writing", "3 above at the top of their spreadsheets",
		"19 below Source: a statistics office, 2024 edition", "20 below * provisional figures"}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped rows %q, want %q", skipped, want)
	}
	if notes := strings.Join(tb.Report.Notes, "\n"); !strings.Contains(notes, "the header is row 5") {
		t.Errorf("the notes do not say where the header is: %s", notes)
	}
	// A table whose first row is its header, and one whose last row holds
	// a single word, keep today's reading.
	plain := excelize.NewFile()
	for i, r := range [][]any{{"name", "qty"}, {"pen", 3}, {"ink", 4}, {"paper"}} {
		plain.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i+1), &r)
	}
	b.Reset()
	plain.Write(&b)
	f, err = fx.ingestBytes("plain.xlsx", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if tb := f.Tables[0]; tb.RowCount != 3 || len(tb.Report.Skipped) != 0 || tb.Columns[0].Key != "name" {
		t.Errorf("a plain table: %d rows, skipped %v, first column %s", tb.RowCount, tb.Report.Skipped, tb.Columns[0].Key)
	}
}

// excelDate is a day as Excel's serial number.
func excelDate(y, m, d int) float64 {
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)).Hours() / 24
}

// TestCSVTitlesKeptOut: a national accounts CSV with its title and source
// above the header had the title for a header and every column text. The
// header is found as in a sheet, the rows above it are listed, and the
// long doubles under it are numbers.
func TestCSVTitlesKeptOut(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("Table 1. Gross domestic product,,\nSource: national accounts; current prices,,\n,,\ncountry,year,gdp\n")
	for i := range 40 {
		fmt.Fprintf(&b, "C%d,%d,%s\n", i%5, 2000+i, []string{"2813571753.8725324", "9958200000.0", "99.99", ".."}[i%4])
	}
	fx := newFixture(t)
	f, err := fx.ingestBytes("gdp.csv", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if got := columnTypes(tb.Columns); got != "country text, year integer, gdp double" {
		t.Errorf("columns: %s", got)
	}
	if tb.RowCount != 40 {
		t.Errorf("%d rows, want 40", tb.RowCount)
	}
	var skipped []string
	for _, s := range tb.Report.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d %s %s", s.Row, s.Where, s.Text))
	}
	want := []string{"1 above Table 1. Gross domestic product", "2 above Source: national accounts; current prices"}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped rows %q, want %q", skipped, want)
	}
	// A CSV whose first row is its header reads as before, by DuckDB.
	f, err = fx.ingestBytes("plain.csv", []byte("name,qty\npen,3\nink,4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tb := f.Tables[0]; tb.RowCount != 2 || len(tb.Report.Skipped) != 0 || tb.Columns[0].Key != "name" {
		t.Errorf("a plain CSV: %d rows, skipped %v, first column %s", tb.RowCount, tb.Report.Skipped, tb.Columns[0].Key)
	}
}

// TestSheetNumbersAmongMarks: a statistics office's sheet of number cells
// with ".." in the cells of missing values had every such column text. It
// is numeric now, the marks empty and counted.
func TestSheetNumbersAmongMarks(t *testing.T) {
	wb := excelize.NewFile()
	rows := [][]any{{"country", "2019", "2020"}}
	for i := range 30 {
		v2019, v2020 := any(1000.5+float64(i)), any(2813571.25+float64(i))
		if i%7 == 3 {
			v2019 = ".."
		}
		if i%11 == 5 {
			v2020 = "n/a"
		}
		rows = append(rows, []any{fmt.Sprintf("C%02d", i), v2019, v2020})
	}
	for i, r := range rows {
		if err := wb.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i+1), &r); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := wb.Write(&b); err != nil {
		t.Fatal(err)
	}
	f, err := newFixture(t).ingestBytes("stats.xlsx", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if got := columnTypes(tb.Columns); got != "country text, 2019 decimal, 2020 decimal" {
		t.Errorf("columns: %s (%v)", got, tb.Columns)
	}
	notes := strings.Join(tb.Report.Notes, "\n")
	for _, want := range []string{`2019: ".." in 4 cells`, `2020: "n/a" in 3 cells`} {
		if !strings.Contains(notes, want) {
			t.Errorf("the report lacks %q: %s", want, notes)
		}
	}
}

// TestHeaderNotCertain: a title over a table of text alone gives no
// evidence of where the header is; the first row stays the header, as
// before, and the report says it was not certain and how to name it.
func TestHeaderNotCertain(t *testing.T) {
	t.Parallel()
	f, err := newFixture(t).ingestBytes("quarters.csv", []byte("Quarterly report\nregion,q1,q2,q3\nN,x,y,z\nS,a,b,c\nE,d,e,f\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if tb.Columns[0].Key != "quarterly_report" || len(tb.Report.Skipped) != 0 {
		t.Errorf("first column %s, kept out %v: want today's reading", tb.Columns[0].Key, tb.Report.Skipped)
	}
	if notes := strings.Join(tb.Report.Notes, "\n"); !strings.Contains(notes, "the header was not certain: row 1") || !strings.Contains(notes, "header_row") {
		t.Errorf("notes: %s", notes)
	}
}

// TestCSVNotesBelowKeptOut: a CSV whose data ends with a source line and a
// footnote, read by DuckDB, kept them as rows, which made its numbers
// text. The end of the file is read first; such a file goes through Go,
// which keeps the notes out and lists them.
func TestCSVNotesBelowKeptOut(t *testing.T) {
	var b strings.Builder
	b.WriteString("country,year,gdp,pop,area\n")
	for i := range 30 {
		fmt.Fprintf(&b, "C%d,%d,%d.5,%d,%d\n", i, 2000+i, 1000+i, 50+i, 7*i)
	}
	b.WriteString(",,,,\n\"Source: national accounts, 2024 edition\",,,,\n* provisional,,,,\n")
	f, err := newFixture(t).ingestBytes("gdp.csv", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if got := columnTypes(tb.Columns); got != "country text, year integer, gdp decimal, pop integer, area integer" {
		t.Errorf("columns: %s", got)
	}
	if tb.RowCount != 30 {
		t.Errorf("%d rows, want 30", tb.RowCount)
	}
	var skipped []string
	for _, s := range tb.Report.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d %s %s", s.Row, s.Where, s.Text))
	}
	want := []string{"33 below Source: national accounts, 2024 edition", "34 below * provisional"}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
}

// TestYearHeaderUnderPreamble: the World Bank's CSV layout, a preamble
// ("Data Source", "Last Updated Date") above a header of four labels and
// a column a year, made the preamble the header. Years rising along a row
// over columns of numbers are a header.
func TestYearHeaderUnderPreamble(t *testing.T) {
	var b strings.Builder
	b.WriteString("\"Data Source\",\"World Development Indicators\",\n\n\"Last Updated Date\",\"2023-03-01\",\n\n")
	b.WriteString("\"Country Name\",\"Country Code\",\"Indicator Name\",\"Indicator Code\",\"2018\",\"2019\",\"2020\",\"2021\",\n")
	for i := range 12 {
		fmt.Fprintf(&b, "\"Country %d\",\"C%02d\",\"GDP (current US$)\",\"NY.GDP.MKTP.CD\",\"%d.25\",\"\",\"%d\",\"%d.5\",\n", i, i, 1000+i, 2000+i, 3000+i)
	}
	f, err := newFixture(t).ingestBytes("API_NY.GDP.MKTP.CD.csv", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if got := columnTypes(tb.Columns[:8]); got != "country_name text, country_code text, indicator_name text, indicator_code text, 2018 decimal, 2019 text, 2020 integer, 2021 decimal" {
		t.Errorf("columns: %s", got)
	}
	if tb.RowCount != 12 || len(tb.Report.Skipped) != 2 || tb.Report.HeaderRow != 5 {
		t.Errorf("%d rows, header record %d, kept out %v", tb.RowCount, tb.Report.HeaderRow, tb.Report.Skipped)
	}
}

// columnTypes lists columns as "key type", joined by commas.
func columnTypes(cols []catalog.Column) string {
	var types []string
	for _, c := range cols {
		types = append(types, c.Key+" "+c.Type)
	}
	return strings.Join(types, ", ")
}
