package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
	"datadesk/internal/testenv"
)

// shapeCase is a file as agencies publish it and its right reading: the
// table's header rows, row count, column keys and types, the rows kept
// out (row:where), and what a reference reader told the right rows
// reads (referenceRows).
type shapeCase struct {
	name    string // the file's name
	content []byte
	table   string // the table's name; "" the first
	header  []int64
	rows    int64
	columns string // "key type, ..."
	kept    string // "row:where, ..."
	ref     referenceRows
	// keyed: the first column the reference's first (a section column
	// leads the table otherwise).
	skipCols int
}

// referenceRows is how a reference reader (refstored.py: the csv module,
// openpyxl or xlrd) is told to read a table: the row of its last header
// row, its last data row (0: to the end), the rows to skip between and
// the marks of a missing value, as pandas' header/skiprows/na_values.
type referenceRows struct {
	header, last int
	skip         []int
	na           string
}

// workbook writes rows into an XLSX, with merged ranges and a date
// format on every value made by day().
func workbook(t *testing.T, sheet string, rows [][]any, merges ...string) []byte {
	t.Helper()
	wb := excelize.NewFile()
	if sheet != "Sheet1" {
		wb.SetSheetName("Sheet1", sheet)
	}
	dateStyle, _ := wb.NewStyle(&excelize.Style{NumFmt: 14})
	for i, r := range rows {
		vals := make([]any, len(r))
		for c, v := range r {
			if d, ok := v.(dayValue); ok {
				vals[c] = float64(d)
				cell, _ := excelize.CoordinatesToCellName(c+1, i+1)
				wb.SetCellStyle(sheet, cell, cell, dateStyle)
				continue
			}
			vals[c] = v
		}
		if err := wb.SetSheetRow(sheet, fmt.Sprintf("A%d", i+1), &vals); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range merges {
		from, to, _ := strings.Cut(m, ":")
		if err := wb.MergeCell(sheet, from, to); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := wb.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// dayValue is a date cell: its Excel day number.
type dayValue float64

func day(y, m, d int) dayValue { return dayValue(excelDate(y, m, d)) }

// housePrices is a house-price workbook's shape: a title, a group row
// whose labels span three columns each (merged), labels, units, monthly
// rows, and one price cell reading "Series discontinued".
func housePrices(t *testing.T) []byte {
	rows := [][]any{
		{}, {},
		{"UK House Price Index: average prices by type of house"},
		{nil, "All Houses", nil, nil, "New Houses", nil, nil},
		{"Date", "Index", "Price", "Annual Change", "Index", "Price", "Annual Change"},
		{nil, nil, "£", "%", nil, "£", "%"},
	}
	for i := range 252 {
		price := any(150000.5 + float64(i)*311.73)
		if i == 200 {
			price = "Series discontinued"
		}
		rows = append(rows, []any{day(2000+i/12, 1+i%12, 1), 100 + float64(i)/4, 120000.25 + float64(i)*417.11,
			float64(i%40) / 10, 98 + float64(i)/5, price, float64(i%30)/10 - 1})
	}
	return workbook(t, "Prices", rows, "B4:D4", "E4:G4")
}

// fundFlows is a fund-flows workbook's shape: titles, a header of two
// rows, section rows naming monthly actuals and weekly estimates, and two
// footnotes.
func fundFlows(t *testing.T) []byte {
	rows := [][]any{
		{},
		{"Estimated Long-Term Mutual Fund Flows"},
		{"Millions of dollars"},
		{},
		{nil, "Total", "Domestic", "World", "Total", "Taxable"},
		{"Date", "Equity", "Equity", "Equity", "Bond", "Bond"},
		{"Monthly Net New Cash Flow"},
	}
	for i := range 24 {
		rows = append(rows, []any{day(2023+i/12, 1+i%12, 28), -100 + i*7, -60 + i*3, -40 + i*4, 20 + i, 15 + i})
	}
	rows = append(rows, []any{"Estimated Weekly Net New Cash Flow"})
	for i := range 10 {
		rows = append(rows, []any{day(2025, 1, 7+7*i), -10 + i, -6 + i, -4, 2 + i, 1 + i})
	}
	rows = append(rows, []any{}, []any{"Note: Weekly cash flows are estimates based on data covering 98 percent of industry assets."},
		[]any{"Source: a fund industry association"})
	return workbook(t, "Flows", rows)
}

// twoTables is a sheet holding a small table above a larger one, each
// under its own header.
func twoTables(t *testing.T) []byte {
	rows := [][]any{
		{"Region", "Stores", "Opened"},
		{"North", 12, day(2019, 3, 1)},
		{"South", 9, day(2020, 6, 1)},
		{},
		{"Sales by month"},
		{"Month", "Region", "Units", "Revenue"},
	}
	for i := range 20 {
		rows = append(rows, []any{day(2024, 1+i%12, 1), []string{"North", "South"}[i%2], 10 + i, 250.5 + float64(i)})
	}
	return workbook(t, "Summary", rows)
}

// energySeries is an energy agency's series sheet: a navigation row and a
// source key as wide as the data above the header.
func energySeries(t *testing.T) []byte {
	rows := [][]any{
		{"Back to Contents", "Data 1: Cushing, OK WTI Spot Price FOB (Dollars per Barrel)"},
		{"Sourcekey", "RWTC"},
		{"Date", "Cushing, OK WTI Spot Price FOB (Dollars per Barrel)"},
	}
	for i := range 40 {
		rows = append(rows, []any{day(2018, 1+i/28, 1+i%28), 60 + float64(i)/4})
	}
	return workbook(t, "Data 1", rows)
}

// metadataCSV is a central bank's download: six metadata lines as wide
// as the data above a period and a yield.
func metadataCSV() []byte {
	var b strings.Builder
	b.WriteString("\"Series Description\",\"Market yield on U.S. Treasury securities at 10-year constant maturity\"\n" +
		"\"Unit:\",\"Percent:_Per_Year\"\n\"Multiplier:\",\"1\"\n\"Currency:\",\"NA\"\n" +
		"\"Unique Identifier: \",\"H15/H15/RIFLGFCY10_N.M\"\n\"Time Period\",\"RIFLGFCY10_N.M\"\n")
	for i := range 30 {
		fmt.Fprintf(&b, "%d-%02d,%.2f\n", 1990+i/12, 1+i%12, 7.5+float64(i)/10)
	}
	return []byte(b.String())
}

// sectionsCSV is a CSV with a two-row header with units, sections and a
// footnote.
func sectionsCSV() []byte {
	var b strings.Builder
	b.WriteString("Crude oil production\n\n,Onshore,Onshore,Offshore\nyear,Output,Share,Output\n,kt,%,kt\nActual\n")
	for i := range 6 {
		fmt.Fprintf(&b, "%d,%d,%.1f,%d\n", 2015+i, 500+i*10, 40+float64(i), 700+i*5)
	}
	b.WriteString("Forecast\n")
	for i := range 3 {
		fmt.Fprintf(&b, "%d,%d,%.1f,%d\n", 2021+i, 560+i*10, 46+float64(i), 730+i*5)
	}
	b.WriteString("\n* forecasts are the ministry's\n")
	return []byte(b.String())
}

// TestShapesOfPublishedTables reads the agencies' files of testdata/messy
// and constructed files of each shape they come in (titles as wide as the
// data, metadata lines in a CSV, headers of two and three rows with
// units, section rows, footnotes, two tables in a sheet, notes in a
// numeric column), as uploaded, with nothing said of where their tables
// are: each table's header, rows, types and kept-out rows are the right
// reading's, and every cell is the reference reader's told the right
// rows.
func TestShapesOfPublishedTables(t *testing.T) {
	t.Parallel()
	messy := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "messy", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []shapeCase{
		{name: "wti-day.xls", content: messy("wti-day.xls"), table: "Data 1", header: []int64{3}, rows: 8225,
			columns: "date date, cushing_ok_wti_spot_price_fob_dollars_per_barrel decimal", kept: "1:above, 2:above",
			ref: referenceRows{header: 3}},
		{name: "brent-month.xls", content: messy("brent-month.xls"), table: "Data 1", header: []int64{3}, rows: 375,
			columns: "date date, europe_brent_spot_price_fob_dollars_per_barrel decimal", kept: "1:above, 2:above",
			ref: referenceRows{header: 3}},
		{name: "h15-10y-monthly.csv", content: messy("h15-10y-monthly.csv"), header: []int64{6}, rows: 879,
			columns: "time_period date, riflgfcy10_n_m decimal", kept: "1:above, 2:above, 3:above, 4:above, 5:above",
			ref: referenceRows{header: 6}},
		{name: "house-prices.xlsx", content: housePrices(t), header: []int64{4, 5, 6}, rows: 252,
			columns: "date date, all_houses_index decimal, all_houses_price decimal, all_houses_annual_change decimal, " +
				"new_houses_index decimal, new_houses_price decimal, new_houses_annual_change decimal",
			kept: "3:above",
			ref:  referenceRows{header: 6, na: "Series discontinued"}},
		{name: "fund-flows.xlsx", content: fundFlows(t), header: []int64{5, 6}, rows: 34,
			columns: "section text, date date, total_equity integer, domestic_equity integer, world_equity integer, total_bond integer, taxable_bond integer",
			kept:    "2:above, 3:above, 7:section, 32:section, 44:below, 45:below",
			ref:     referenceRows{header: 6, last: 43, skip: []int{7, 32}}, skipCols: 1},
		{name: "two-tables.xlsx", content: twoTables(t), header: []int64{1}, rows: 2,
			columns: "region text, stores integer, opened date", ref: referenceRows{header: 1, last: 3}},
		{name: "two-tables.xlsx", table: "Summary · Sales by month", content: twoTables(t), header: []int64{6}, rows: 20,
			columns: "month date, region text, units integer, revenue decimal", kept: "5:above", ref: referenceRows{header: 6}},
		{name: "energy.xlsx", content: energySeries(t), header: []int64{3}, rows: 40,
			columns: "date date, cushing_ok_wti_spot_price_fob_dollars_per_barrel decimal", kept: "1:above, 2:above",
			ref: referenceRows{header: 3}},
		{name: "h15.csv", content: metadataCSV(), header: []int64{6}, rows: 30,
			columns: "time_period date, riflgfcy10_n_m decimal", kept: "1:above, 2:above, 3:above, 4:above, 5:above",
			ref: referenceRows{header: 6}},
		{name: "production.csv", content: sectionsCSV(), header: []int64{3, 4, 5}, rows: 9,
			columns: "section text, year integer, onshore_output integer, onshore_share decimal, offshore_output integer",
			kept:    "1:above, 6:section, 13:section, 18:below",
			ref:     referenceRows{header: 5, last: 16, skip: []int{6, 13}}, skipCols: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.table, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			path := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(path, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := fx.ingest(path, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			tb := tableNamed(f, tc.table)
			if tb == nil {
				t.Fatalf("no table %q among %v", tc.table, tableNames(f))
			}
			checkShape(t, fx, tb, tc)
			compareWithReference(t, fx, tb, path, tc)
		})
	}
}

func tableNames(f *catalog.File) []string {
	var out []string
	for _, t := range f.Tables {
		out = append(out, t.Name)
	}
	return out
}

// checkShape checks a table's header rows, rows, columns and rows kept out.
func checkShape(t *testing.T, fx *fixture, tb *catalog.Table, tc shapeCase) {
	t.Helper()
	if fmt.Sprint(tb.Report.HeaderRows) != fmt.Sprint(tc.header) {
		t.Errorf("header rows %v, want %v (notes %q)", tb.Report.HeaderRows, tc.header, tb.Report.Notes)
	}
	if tb.RowCount != tc.rows {
		t.Errorf("%d rows, want %d", tb.RowCount, tc.rows)
	}
	if got := columnTypes(tb.Columns); got != tc.columns {
		t.Errorf("columns:\n got %s\nwant %s", got, tc.columns)
	}
	var kept []string
	for _, s := range tb.Report.Skipped {
		kept = append(kept, fmt.Sprintf("%d:%s", s.Row, s.Where))
	}
	if got := strings.Join(kept, ", "); got != tc.kept {
		t.Errorf("kept out %q, want %q", got, tc.kept)
	}
}

// compareWithReference compares every stored cell with what refstored.py
// reads told the table's rows.
func compareWithReference(t *testing.T, fx *fixture, tb *catalog.Table, path string, tc shapeCase) {
	t.Helper()
	py := referencePython()
	if py == "" {
		testenv.Missing(t, "no python3 with openpyxl and xlrd")
		return
	}
	var skip []string
	for _, s := range tc.ref.skip {
		skip = append(skip, strconv.Itoa(s))
	}
	sheet := tb.Report.Sheet
	out, err := exec.Command(py, filepath.Join("testdata", "refstored.py"), path, sheet,
		strconv.Itoa(tc.ref.header), strconv.Itoa(tc.ref.last), tc.ref.na, strings.Join(skip, ",")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Rows [][]*string `json:"rows"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	rows := fx.allRows(tb.ID)
	if len(rows) != len(ref.Rows) {
		t.Fatalf("%d rows, the reference %d", len(rows), len(ref.Rows))
	}
	bad := 0
	for r, row := range rows {
		for c, v := range row[tc.skipCols:] {
			var want *string
			if c < len(ref.Rows[r]) {
				want = ref.Rows[r][c]
			}
			if !sameAsReference(want, v) && bad < 10 {
				bad++
				t.Errorf("row %d %s: %#v, the reference %v", r+1, tb.Columns[c+tc.skipCols].Key, v, deref(want))
			}
		}
	}
}

// TestHouseHeaderUnitsAndNotes: a header of a group row, a label row
// and a units row gives one label per column, a key without the unit
// and the unit apart; a price column with one cell of other text is
// numeric, that cell stored empty and listed with its row.
func TestHouseHeaderUnitsAndNotes(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f, err := fx.ingestBytes("house-prices.xlsx", housePrices(t))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	c := tb.Columns[5]
	if c.Key != "new_houses_price" || c.Label != "New Houses · Price (£)" || c.Unit != "£" {
		t.Errorf("column %q labelled %q, unit %q", c.Key, c.Label, c.Unit)
	}
	if !strings.Contains(c.Reason, `1 cell of other text ("Series discontinued") stored empty`) {
		t.Errorf("reason %q", c.Reason)
	}
	want := []catalog.ClearedCell{{Row: 207, TableRow: 201, Column: "new_houses_price", Text: "Series discontinued"}}
	if fmt.Sprint(tb.Report.Cleared) != fmt.Sprint(want) {
		t.Errorf("cleared %+v, want %+v", tb.Report.Cleared, want)
	}
	notes := strings.Join(tb.Report.Notes, "\n")
	for _, n := range []string{"the header is rows 4 to 6", `new_houses_price: 1 cell of other text in a column of numbers stored empty (cleared_cells lists each): row 207 "Series discontinued"`} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
}

// TestYearMonthsAreDates: a column of a year and a month (1953-04), as
// statistics publish monthly series, is a date, each the month's first
// day, whichever way the file is read; a value that is no month keeps
// the column text.
func TestYearMonthsAreDates(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for name, body := range map[string]string{
		"plain.csv":  "period,value\n2024-01,1.5\n2024-02,2.5\n2024-12,3\n",
		"titled.csv": "Monthly values\n\nperiod,value\n2024-01,1.5\n2024-02,2.5\n2024-12,3\n",
	} {
		f, err := fx.ingestBytes(name, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		tb := f.Tables[0]
		if got := columnTypes(tb.Columns); got != "period date, value decimal" {
			t.Errorf("%s: %s (%s)", name, got, tb.Columns[0].Reason)
		}
		if rows := fx.rows(tb.ID); fmt.Sprint(rows[2][0]) != "2024-12-01" {
			t.Errorf("%s: %v", name, rows)
		}
	}
	f, err := fx.ingestBytes("odd.csv", []byte("period,value\n2024-01,1\n2024-13,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Tables[0].Columns[0]; c.Type != "text" {
		t.Errorf("a month 13: %s (%s)", c.Type, c.Reason)
	}
}

// TestUnitsRowUnderLabels: a CSV whose label row is followed by a row of
// units in words reads both as its header, the units kept apart.
func TestUnitsRowUnderLabels(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f, err := fx.ingestBytes("gdp.csv", []byte("year,gdp,population\n,USD bn,millions of people\n2000,1.5,3.2\n2001,1.7,3.3\n2002,1.9,3.4\n"))
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if got := columnTypes(tb.Columns); got != "year integer, gdp decimal, population decimal" || tb.RowCount != 3 {
		t.Fatalf("%s, %d rows", got, tb.RowCount)
	}
	if c := tb.Columns[1]; c.Label != "gdp (USD bn)" || c.Unit != "USD bn" {
		t.Errorf("label %q unit %q", c.Label, c.Unit)
	}
}
