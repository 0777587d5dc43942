package exports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
	"datadesk/internal/testenv"
)

// edgeColumns and edgeRows hold the values readers get wrong: dates from
// year 1 to 9999, decimals with trailing zeros, negative zero, numbers
// Excel would round, NaN, and text that looks like a number or a formula.
var edgeColumns = []catalog.Column{
	{Key: "day", Label: "Day", Type: typing.TypeDate},
	{Key: "at", Label: "At", Type: typing.TypeTimestamp},
	{Key: "price", Label: "Price", Type: typing.TypeDecimal},
	{Key: "ratio", Label: "Ratio", Type: typing.TypeDouble},
	{Key: "count", Label: "Count", Type: typing.TypeInteger},
	{Key: "note", Label: "Note", Type: typing.TypeText},
}

func wall(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999999", s)
	if err != nil {
		panic(err)
	}
	return t
}

var edgeRows = [][]any{
	{wall("0001-01-01 00:00:00"), wall("1899-12-31 23:59:59"), json.Number("1.50"), -0.0, int64(5), "-5"},
	{wall("1900-01-01 00:00:00"), wall("1900-02-28 12:00:00"), json.Number("-0.25"), 0.1, int64(999_999_999_999_999), "+3"},
	{wall("1900-03-01 00:00:00"), wall("2024-02-29 08:30:00.25"), json.Number("100.000"), math.NaN(), int64(1_234_567_890_123_456_789), "=1+2"},
	{wall("9999-12-31 00:00:00"), wall("9999-12-31 23:59:59.999999"), json.Number("1234567890123456.78"), math.Inf(-1), int64(-7), "-x"},
}

func edgeSource() Source {
	return Source{Columns: edgeColumns, Count: int64(len(edgeRows)), Rows: func(yield func([]any) error) error {
		for _, r := range edgeRows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}}
}

// TestXLSXEdgeValuesByValue reads the edge values back with excelize as
// Excel would show them: dates Excel can show are date cells, others ISO
// text noted on the Notes sheet; decimals keep their scale; nothing is an
// error cell and nothing is rounded.
func TestXLSXEdgeValuesByValue(t *testing.T) {
	var b bytes.Buffer
	res, err := WriteXLSX(&b, edgeSource(), Options{SheetName: "Edge"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shown, err := f.GetRows("Edge")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Day", "At", "Price", "Ratio", "Count", "Note"},
		{"0001-01-01", "1899-12-31T23:59:59", "1.50", "0", "5", "-5"},
		{"1900-01-01", "1900-02-28 12:00:00", "-0.25", "0.1", "999999999999999", "+3"},
		{"1900-03-01", "", "100.000", "NaN", "1234567890123456789", "=1+2"},
		{"9999-12-31", "", "1234567890123456.78", "-Infinity", "-7", "-x"},
	}
	// excelize renders milliseconds wrongly; those cells are checked by
	// serial and format below, and by openpyxl.
	shown[3][1], shown[4][1] = "", ""
	if fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Errorf("shown\n got %q\nwant %q", shown, want)
	}
	// Cell kinds: dates Excel can show are numbers, the rest text.
	for cell, wantType := range map[string]excelize.CellType{
		"A2": excelize.CellTypeInlineString, "A3": excelize.CellTypeUnset, "A5": excelize.CellTypeUnset,
		"B2": excelize.CellTypeInlineString, "B5": excelize.CellTypeUnset, "C2": excelize.CellTypeUnset,
		"C5": excelize.CellTypeInlineString, "E4": excelize.CellTypeInlineString, "D4": excelize.CellTypeInlineString,
	} {
		if got, err := f.GetCellType("Edge", cell); err != nil || got != wantType {
			t.Errorf("%s: type %v (%v), want %v", cell, got, err, wantType)
		}
	}
	raw, _ := f.GetRows("Edge", excelize.Options{RawCellValue: true})
	for _, c := range []struct {
		row, col int
		want     string
	}{{2, 0, "1"}, {2, 1, "59.5"}, {3, 0, "61"}, {4, 0, "2958465"}, {1, 3, "0"}} {
		if raw[c.row][c.col] != c.want {
			t.Errorf("raw %d,%d: got %q, want %q", c.row, c.col, raw[c.row][c.col], c.want)
		}
	}
	if serial := raw[4][1]; !strings.HasPrefix(serial, "2958465.99999") {
		t.Errorf("9999-12-31 23:59:59.999999 as %q, want a serial just under 2958466", serial)
	}
	if style, _ := f.GetCellStyle("Edge", "B4"); true {
		if s, _ := f.GetStyle(style); s == nil || s.CustomNumFmt == nil || *s.CustomNumFmt != "yyyy-mm-dd hh:mm:ss.000" {
			t.Errorf("B4 style %+v, want milliseconds shown", s)
		}
	}
	if style, _ := f.GetCellStyle("Edge", "C2"); true {
		if s, _ := f.GetStyle(style); s == nil || s.CustomNumFmt == nil || *s.CustomNumFmt != "0.00" {
			t.Errorf("C2 style %+v, want 0.00", s)
		}
	}
	if len(res.Notes) != 5 {
		t.Errorf("notes %q, want the text columns Day, At, Price, Ratio, Count named", res.Notes)
	}
	notes, _ := f.GetRows("Notes")
	if len(notes) != len(res.Notes) || !strings.Contains(notes[0][0], `"Day"`) {
		t.Errorf("notes sheet %q", notes)
	}
	dim, _ := f.GetSheetDimension("Edge")
	if dim != "A1:F5" {
		t.Errorf("dimension %q, want A1:F5", dim)
	}
}

// TestCSVAndJSONEdgeValues: text forms carry values exactly; only formulas
// are neutralised.
func TestCSVAndJSONEdgeValues(t *testing.T) {
	var b bytes.Buffer
	if _, err := WriteCSV(&b, edgeSource(), Options{}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Day", "At", "Price", "Ratio", "Count", "Note"},
		{"0001-01-01", "1899-12-31T23:59:59", "1.50", "0", "5", "-5"},
		{"1900-01-01", "1900-02-28T12:00:00", "-0.25", "0.1", "999999999999999", "+3"},
		{"1900-03-01", "2024-02-29T08:30:00.25", "100.000", "NaN", "1234567890123456789", "'=1+2"},
		{"9999-12-31", "9999-12-31T23:59:59.999999", "1234567890123456.78", "-Infinity", "-7", "'-x"},
	}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("csv\n got %q\nwant %q", recs, want)
	}
	b.Reset()
	if _, err := WriteJSON(&b, edgeSource()); err != nil {
		t.Fatal(err)
	}
	var got struct{ Rows []json.RawMessage }
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := []string{
		`["0001-01-01","1899-12-31T23:59:59",1.50,0,5,"-5"]`,
		`["1900-01-01","1900-02-28T12:00:00",-0.25,0.1,999999999999999,"+3"]`,
		`["1900-03-01","2024-02-29T08:30:00.25",100.000,"NaN",1234567890123456789,"=1+2"]`,
		`["9999-12-31","9999-12-31T23:59:59.999999",1234567890123456.78,"-Infinity",-7,"-x"]`,
	}
	for i, w := range wantJSON {
		if string(got.Rows[i]) != w {
			t.Errorf("json row %d: got %s, want %s", i, got.Rows[i], w)
		}
	}
}

func TestNeutralizeKeepsPlainNumbers(t *testing.T) {
	for in, out := range map[string]string{
		"-5": "-5", "+3": "+3", "-1.5e3": "-1.5e3", "-.5": "-.5", "+0": "+0",
		"-5 apples": "'-5 apples", "-": "'-", "+": "'+", "-2+3": "'-2+3", "+44 20 7946 0000": "'+44 20 7946 0000",
		"=1": "'=1", "@A1": "'@A1", "\t5": "'\t5", "5": "5", "-1,5": "'-1,5",
	} {
		if got := Neutralize(in); got != out {
			t.Errorf("Neutralize(%q) = %q, want %q", in, got, out)
		}
	}
}

// openpyxlPython finds an interpreter that can import openpyxl: Debian's
// first, then whatever python3 is on PATH.
func openpyxlPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import openpyxl").Run() == nil {
			return path
		}
	}
	testenv.Missing(t, "no python3 with openpyxl (make test installs Debian's python3-openpyxl)")
	return ""
}

type pyCell [2]any // value, number format

type pySheet struct {
	Dimension string     `json:"dimension"`
	Rows      [][]pyCell `json:"rows"`
}

// readWithOpenpyxl reads a workbook with openpyxl's read-only mode.
func readWithOpenpyxl(t *testing.T, python string, xlsx []byte) map[string]pySheet {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export.xlsx")
	if err := os.WriteFile(path, xlsx, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "testdata/read_xlsx.py", path).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("openpyxl: %v\n%s", err, stderr)
	}
	var sheets map[string]pySheet
	if err := json.Unmarshal(out, &sheets); err != nil {
		t.Fatal(err)
	}
	return sheets
}

// TestOpenpyxlReadOnlyReadsEveryRow: openpyxl in read-only mode reads only
// the range a sheet declares; every row of every sheet must come back, by
// value, with decimals' formats and real dates.
func TestOpenpyxlReadOnlyReadsEveryRow(t *testing.T) {
	python := openpyxlPython(t)
	const n = 503
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{wall("2024-01-01 00:00:00").AddDate(0, 0, i), wall("2024-01-01 10:00:00"), json.Number(fmt.Sprintf("%d.50", i)), float64(i) / 4, int64(i), fmt.Sprintf("-%d", i)}
	}
	rows = append(rows, edgeRows...)
	src := Source{Columns: edgeColumns, Count: int64(len(rows)), Rows: func(yield func([]any) error) error {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}}
	var b bytes.Buffer
	if _, err := WriteXLSX(&b, src, Options{SheetName: "Data", sheetRows: 300, Extra: []Sheet{{Name: "AI labels", Rows: [][]string{{"key", "label"}, {"day", "Day"}, {"at", "At"}}}}}); err != nil {
		t.Fatal(err)
	}
	sheets := readWithOpenpyxl(t, python, b.Bytes())
	for name, want := range map[string]struct {
		dim  string
		rows int
	}{"Data": {"A1:F301", 301}, "Data (2)": {"A1:F208", 208}, "AI labels": {"A1:B3", 3}, "Notes": {"A1:A5", 5}} {
		s, ok := sheets[name]
		if !ok {
			t.Errorf("sheet %q missing; got %v", name, sheets)
			continue
		}
		if s.Dimension != want.dim || len(s.Rows) != want.rows {
			t.Errorf("%s: dimension %s with %d rows, want %s with %d", name, s.Dimension, len(s.Rows), want.dim, want.rows)
		}
	}
	data := append(sheets["Data"].Rows[1:], sheets["Data (2)"].Rows[1:]...)
	if len(data) != len(rows) {
		t.Fatalf("read %d data rows, want %d", len(data), len(rows))
	}
	for i := 0; i < n; i++ {
		want := []any{rows[i][0].(time.Time).Format("2006-01-02T15:04:05"), "2024-01-01T10:00:00", fmt.Sprintf("%d.5", i), fmt.Sprint(float64(i) / 4), fmt.Sprint(i), fmt.Sprintf("-%d", i)}
		got := make([]any, len(data[i]))
		for j, c := range data[i] {
			got[j] = c[0]
		}
		if fmt.Sprint(got[:4]) != fmt.Sprint(want[:4]) && !floatsEqual(got, want) {
			t.Errorf("row %d: got %v, want %v", i, got, want)
		}
		if data[i][2][1] != "0.00" {
			t.Errorf("row %d: price format %v, want 0.00", i, data[i][2][1])
		}
	}
	edge := data[n:]
	wantEdge := [][]any{
		{"0001-01-01", "1899-12-31T23:59:59", "1.5", "0", "5", "-5"},
		{"1900-01-01T00:00:00", "1900-02-28T12:00:00", "-0.25", "0.1", "999999999999999", "+3"},
		{"1900-03-01T00:00:00", "2024-02-29T08:30:00.250000", "100", "NaN", "1234567890123456789", "=1+2"},
		{"9999-12-31T00:00:00", "9999-12-31T23:59:59.999000", "1234567890123456.78", "-Infinity", "-7", "-x"},
	}
	for i, w := range wantEdge {
		got := make([]any, len(edge[i]))
		for j, c := range edge[i] {
			got[j] = c[0]
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("edge row %d: got %q, want %q", i, got, w)
		}
	}
}

// floatsEqual compares cells as numbers where both parse as numbers.
func floatsEqual(got, want []any) bool {
	for i := range want {
		var g, w float64
		_, e1 := fmt.Sscan(fmt.Sprint(got[i]), &g)
		_, e2 := fmt.Sscan(fmt.Sprint(want[i]), &w)
		if e1 != nil || e2 != nil {
			if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
				return false
			}
			continue
		}
		if g != w {
			return false
		}
	}
	return true
}
