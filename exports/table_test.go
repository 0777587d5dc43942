package exports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

var testColumns = []catalog.Column{
	{Key: "id", Label: "Order ID", Type: typing.TypeText, Identifier: true},
	{Key: "big_id", Label: "Big ID", Type: typing.TypeText, Identifier: true},
	{Key: "amount", Label: "Amount", Type: typing.TypeDecimal},
	{Key: "qty", Label: "Qty", Type: typing.TypeInteger},
	{Key: "day", Label: "Day", Type: typing.TypeDate},
	{Key: "at", Label: "At", Type: typing.TypeTimestamp},
	{Key: "ok", Label: "OK", Type: typing.TypeBoolean},
	{Key: "name", Label: "Name", Type: typing.TypeText},
}

func day(s string) time.Time {
	t, _ := time.Parse("2006-01-02 15:04:05", s)
	return t
}

var testRows = [][]any{
	{"00123", "12345678901234567890", json.Number("-12.50"), int64(-7), day("2024-01-31 00:00:00"), day("2024-01-31 13:45:10"), true, "Zoë 日本 🍣"},
	{"007", "99999999999999999999", json.Number("0.01"), int64(0), nil, nil, false, ""},
	{nil, nil, nil, nil, nil, nil, nil, "=SUM(A1:A2)"},
}

func testSource(rows [][]any) Source {
	return Source{Columns: testColumns, Count: int64(len(rows)), Rows: func(yield func([]any) error) error {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}}
}

// TestXLSXRoundTrip reads an export back with excelize and compares by value
// and by cell type: identifiers are text cells, numbers numbers, dates
// dates.
func TestXLSXRoundTrip(t *testing.T) {
	var b bytes.Buffer
	res, err := WriteXLSX(&b, testSource(testRows), Options{SheetName: "Orders"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 || res.Sheets != 1 {
		t.Errorf("result %+v", res)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Orders", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Order ID", "Big ID", "Amount", "Qty", "Day", "At", "OK", "Name"},
		{"00123", "12345678901234567890", "-12.5", "-7", "45322", "45322.5730324074", "1", "Zoë 日本 🍣"},
		{"007", "99999999999999999999", "0.01", "0", "", "", "0"},
		{"", "", "", "", "", "", "", "=SUM(A1:A2)"},
	}
	for i := range want {
		if fmt.Sprint(rows[i]) != fmt.Sprint(want[i]) {
			t.Errorf("row %d: got %q, want %q", i, rows[i], want[i])
		}
	}
	for cell, wantType := range map[string]excelize.CellType{
		"A2": excelize.CellTypeInlineString, "B2": excelize.CellTypeInlineString, "C2": excelize.CellTypeUnset,
		"G2": excelize.CellTypeBool, "H4": excelize.CellTypeInlineString,
	} {
		got, err := f.GetCellType("Orders", cell)
		if err != nil || got != wantType {
			t.Errorf("%s: type %v (%v), want %v", cell, got, err, wantType)
		}
	}
	if v, _ := f.GetCellValue("Orders", "E2"); v != "2024-01-31" {
		t.Errorf("date shown as %q, want 2024-01-31", v)
	}
	if formula, _ := f.GetCellFormula("Orders", "H4"); formula != "" {
		t.Errorf("text became a formula: %q", formula)
	}
	panes, err := f.GetPanes("Orders")
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("header not frozen: %+v %v", panes, err)
	}
	tables, err := f.GetTables("Orders")
	if err != nil || len(tables) != 1 || tables[0].Range != "A1:H4" {
		t.Errorf("header not filtered by a table: %+v %v", tables, err)
	}
	style, _ := f.GetCellStyle("Orders", "A1")
	if s, _ := f.GetStyle(style); s == nil || s.Font == nil || !s.Font.Bold {
		t.Errorf("header not bold")
	}
}

func TestXLSXMoreSheetsAndLongCells(t *testing.T) {
	rows := make([][]any, 12)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("%03d", i), nil, nil, int64(i), nil, nil, nil, "x"}
	}
	rows[7][7] = strings.Repeat("a", MaxCellChars+5)
	var b bytes.Buffer
	res, err := WriteXLSX(&b, testSource(rows), Options{sheetRows: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sheets != 3 || res.TruncatedCount != 1 || res.Truncated[0].Cell != "H4" || res.Truncated[0].Sheet != "Data (2)" {
		t.Fatalf("result %+v", res)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.GetSheetList(); fmt.Sprint(got) != "[Data Data (2) Data (3) Notes]" {
		t.Errorf("sheets %v", got)
	}
	r2, _ := f.GetRows("Data (2)")
	if len(r2) != 6 || r2[0][0] != "Order ID" || r2[1][0] != "005" {
		t.Errorf("second sheet: %q", r2)
	}
	notes, _ := f.GetRows("Notes")
	if len(notes) != 3 || notes[2][1] != "H4" {
		t.Errorf("notes: %q", notes)
	}
}

func TestCSVRoundTripAndNeutralisation(t *testing.T) {
	var b bytes.Buffer
	if _, err := WriteCSV(&b, testSource(testRows), Options{BOM: true}); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	if !bytes.HasPrefix(raw, []byte("\xEF\xBB\xBF")) {
		t.Errorf("no BOM")
	}
	recs, err := csv.NewReader(bytes.NewReader(raw[3:])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Order ID", "Big ID", "Amount", "Qty", "Day", "At", "OK", "Name"},
		{"00123", "12345678901234567890", "-12.50", "-7", "2024-01-31", "2024-01-31T13:45:10", "true", "Zoë 日本 🍣"},
		{"007", "99999999999999999999", "0.01", "0", "", "", "false", ""},
		{"", "", "", "", "", "", "", "'=SUM(A1:A2)"},
	}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", recs, want)
	}
	for in, out := range map[string]string{"=1+1": "'=1+1", "+44 20": "'+44 20", "-x": "'-x", "@SUM": "'@SUM", "\tx": "'\tx", "\rx": "'\rx", "a=b": "a=b", "": ""} {
		if got := Neutralize(in); got != out {
			t.Errorf("Neutralize(%q) = %q, want %q", in, got, out)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if _, err := WriteJSON(&b, testSource(testRows)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Columns []map[string]string `json:"columns"`
		Rows    [][]any             `json:"rows"`
	}
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Columns[0]["key"] != "id" || got.Columns[0]["type"] != "text" {
		t.Errorf("columns %v", got.Columns)
	}
	want := `[["00123","12345678901234567890",-12.50,-7,"2024-01-31","2024-01-31T13:45:10",true,"Zoë 日本 🍣"],["007","99999999999999999999",0.01,0,null,null,false,""],[null,null,null,null,null,null,null,"=SUM(A1:A2)"]]`
	if g, _ := json.Marshal(got.Rows); string(g) != want {
		t.Errorf("got %s\nwant %s", g, want)
	}
}

func TestSafeEntryNames(t *testing.T) {
	got := SafeEntryNames([]string{"report.csv", "../../etc/passwd", "Report.CSV", "a\\b\\c.txt", "con:trol\x01.txt", "", "...", "report.csv"})
	want := []string{"report.csv", "passwd", "Report (2).CSV", "c.txt", "con_trol_.txt", "file", "file (2)", "report (3).csv"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
