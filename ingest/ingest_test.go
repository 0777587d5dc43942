package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sheetjsDir is the spreadsheet corpus (testdata/sheetjs, its licence
// beside it), or where DATADESK_SHEETJS says.
func sheetjsDir() string {
	if d := os.Getenv("DATADESK_SHEETJS"); d != "" {
		return d
	}
	return filepath.Join("testdata", "sheetjs")
}

func testIngester() *Ingester {
	return New(Config{MaxUnzipSize: 256 << 20})
}

// literalIngester reads each sheet as it is, first row the header: the
// reading compared cell by cell with the reference readers, which find no
// table in a sheet. TestFoundTablesLoseNothing holds the found tables to
// it.
func literalIngester() *Ingester {
	return New(Config{MaxUnzipSize: 256 << 20, Literal: true})
}

type fixture struct {
	t     *testing.T
	in    *Ingester
	store *engine.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	e, err := engine.New(engine.Config{Dir: t.TempDir(), MemoryLimit: "256MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, release, err := e.Acquire(context.Background(), datadesk.NewID("u"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return &fixture{t: t, in: testIngester(), store: s}
}

// ingest reads a file the way an upload does and stores it.
func (fx *fixture) ingest(path, filename string) (*catalog.File, error) {
	tmp := filepath.Join(fx.store.IncomingDir(), datadesk.NewID("up"))
	b, err := os.ReadFile(path)
	if err != nil {
		fx.t.Fatal(err)
	}
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		fx.t.Fatal(err)
	}
	res, err := fx.in.Read(context.Background(), tmp, filename, fx.store.IncomingDir())
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	defer res.Close()
	return fx.store.AddFile(context.Background(), engine.NewFile{Filename: filename, ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
}

func (fx *fixture) ingestBytes(filename string, content []byte) (*catalog.File, error) {
	p := filepath.Join(fx.t.TempDir(), filename)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		fx.t.Fatal(err)
	}
	return fx.ingest(p, filename)
}

// checkTable checks a table's column keys and its rows.
func (fx *fixture) checkTable(tb catalog.Table, keys []string, want [][]any) {
	fx.t.Helper()
	var got []string
	for _, c := range tb.Columns {
		got = append(got, c.Key)
	}
	if fmt.Sprint(got) != fmt.Sprint(keys) {
		fx.t.Errorf("keys: got %v, want %v", got, keys)
	}
	if rows := fx.rows(tb.ID); fmt.Sprintf("%#v", rows) != fmt.Sprintf("%#v", want) {
		fx.t.Errorf("rows: got %#v, want %#v", rows, want)
	}
}

func (fx *fixture) rows(tableID string) [][]any {
	p, err := fx.store.Rows(context.Background(), tableID, catalog.PageRequest{Limit: catalog.MaxPageSize})
	if err != nil {
		fx.t.Fatal(err)
	}
	return p.Rows
}

// TestCorpus ingests every real workbook of the shared corpus: each is
// stored with its rows or refused with a 4xx naming the problem. The golden
// file records what each gives, so a change in any is seen.
func TestCorpus(t *testing.T) {
	t.Parallel()
	dir := sheetjsDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.xls*"))
	if len(files) == 0 {
		t.Fatalf("no corpus in %s", dir)
	}
	sort.Strings(files)
	fx := newFixture(t)
	fx.in = literalIngester()
	var got strings.Builder
	for _, p := range files {
		name := filepath.Base(p)
		f, err := fx.ingest(p, name)
		if err != nil {
			code := datadesk.ErrorCode(err)
			if code == datadesk.Internal {
				t.Errorf("%s: internal error %v; want a 4xx", name, err)
			}
			fmt.Fprintf(&got, "%s: refused %s: %s\n", name, code, datadesk.AsError(err).Message)
			continue
		}
		var parts []string
		for _, tb := range f.Tables {
			parts = append(parts, fmt.Sprintf("%q %dx%d", tb.Name, tb.RowCount, len(tb.Columns)))
		}
		fmt.Fprintf(&got, "%s: %s\n", name, strings.Join(parts, ", "))
	}
	golden := filepath.Join("testdata", "corpus.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("corpus results differ from %s (run with -update to accept):\n%s", golden, diffLines(string(want), got.String()))
	}
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "- %s\n+ %s\n", a, c)
		}
	}
	return b.String()
}

func TestCSVDialectsAndEncodings(t *testing.T) {
	t.Parallel()
	utf16, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte("name,zip\nZoë,02139\n"))
	latin1, _ := charmap.ISO8859_1.NewEncoder().Bytes([]byte("name;zip\nZoë;02139\n"))
	tests := []struct {
		name    string
		file    string
		content []byte
		want    [][]any
		keys    []string
	}{
		{"utf-8 bom", "a.csv", []byte("\xEF\xBB\xBFname,zip\nZoë,02139\n"), [][]any{{"Zoë", "02139"}}, []string{"name", "zip"}},
		{"utf-16 bom", "a.csv", utf16, [][]any{{"Zoë", "02139"}}, []string{"name", "zip"}},
		{"latin-1 semicolon", "a.csv", latin1, [][]any{{"Zoë", "02139"}}, []string{"name", "zip"}},
		{"tsv", "a.tsv", []byte("name\tzip\nZoë\t02139\n"), [][]any{{"Zoë", "02139"}}, []string{"name", "zip"}},
		{"quoted newline and quote", "a.csv", []byte("name,note\n\"a\",\"line1\nline \"\"2\"\"\"\n"), [][]any{{"a", "line1\nline \"2\""}}, []string{"name", "note"}},
		{"headers cleaned", "a.csv", []byte("Name,name,,Total \x07Sum\n1,2,3,4\n"), [][]any{{int64(1), int64(2), int64(3), int64(4)}}, []string{"name", "name_2", "column_3", "total_sum"}},
		{"short and long rows", "a.csv", []byte("a,b\n1\n2,3,4\n"), [][]any{{int64(1), nil, nil}, {int64(2), int64(3), int64(4)}}, []string{"a", "b", "column_3"}},
		{"empty cells are null", "a.csv", []byte("a,b\nx,\n,y\n"), [][]any{{"x", nil}, {nil, "y"}}, []string{"a", "b"}},
		// Excel's "CSV (Macintosh)": every line ends with a carriage
		// return alone; read as it is, the file was one header.
		{"carriage-return lines", "a.csv", []byte("name;qty\rZoë;3\rAl;4\r"), [][]any{{"Zoë", int64(3)}, {"Al", int64(4)}}, []string{"name", "qty"}},
		// DuckDB's strict reader refuses these; Go's reads them.
		{"lines ending two ways", "a.csv", []byte("name,qty\r\nZoë,3\r\nAl,4\n"), [][]any{{"Zoë", int64(3)}, {"Al", int64(4)}}, []string{"name", "qty"}},
		{"a carriage return in a field", "a.csv", []byte("name,qty\nZo\rë,3\nAl,4\n"), [][]any{{"Zo\rë", int64(3)}, {"Al", int64(4)}}, []string{"name", "qty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			f, err := fx.ingestBytes(tc.file, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			fx.checkTable(f.Tables[0], tc.keys, tc.want)
		})
	}
}

func TestLabelsKept(t *testing.T) {
	fx := newFixture(t)
	f, err := fx.ingestBytes("a.csv", []byte("Order ID,Order\x01 Date\n1,2024-01-02\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Tables[0].Columns
	if c[0].Label != "Order ID" || c[1].Label != "Order Date" || c[0].Key != "order_id" {
		t.Errorf("got %+v", c)
	}
	if c[0].Type != typing.TypeText || !c[0].Identifier {
		t.Errorf("order id: got %s identifier=%v, want text identifier", c[0].Type, c[0].Identifier)
	}
	if c[1].Type != typing.TypeDate {
		t.Errorf("order date: got %s, want date", c[1].Type)
	}
}

func TestPostcodesLeadingZeroAfterSample(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString("city,postcode,amount\n")
	for i := 0; i < 25000; i++ {
		fmt.Fprintf(&b, "c%d,%05d,%d.5\n", i, 10000+i, i)
	}
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "z%d,%05d,1\n", i, 1000+i)
	}
	fx := newFixture(t)
	f, err := fx.ingestBytes("postcodes.csv", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tb := f.Tables[0]
	if tb.RowCount != 25500 {
		t.Errorf("rows: got %d, want 25500", tb.RowCount)
	}
	if c := tb.Columns[1]; c.Type != typing.TypeText || !strings.Contains(c.Reason, "500 values with leading zeros") {
		t.Errorf("postcode: got %s (%s), want text for 500 leading zeros", c.Type, c.Reason)
	}
	if c := tb.Columns[2]; c.Type != typing.TypeDecimal {
		t.Errorf("amount: got %s, want decimal", c.Type)
	}
	p, err := fx.store.Rows(context.Background(), tb.ID, catalog.PageRequest{Offset: 25000, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Rows[0][1]; got != "01000" {
		t.Errorf("got %v, want 01000", got)
	}
	p, _ = fx.store.Rows(context.Background(), tb.ID, catalog.PageRequest{Limit: 1})
	if got := p.Rows[0][1]; got != "10000" {
		t.Errorf("got %v, want 10000 as text", got)
	}
}

func TestTwentyDigitIDs(t *testing.T) {
	fx := newFixture(t)
	f, err := fx.ingestBytes("ids.csv", []byte("id,qty\n12345678901234567890,1\n99999999999999999999,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Tables[0].Columns[0]
	if c.Type != typing.TypeText || !c.Identifier {
		t.Fatalf("got %s identifier=%v, want text identifier", c.Type, c.Identifier)
	}
	if got := fx.rows(f.Tables[0].ID); got[0][0] != "12345678901234567890" {
		t.Errorf("got %v", got[0][0])
	}
}

func TestJSONShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		want          string
	}{
		{"array of objects", `[{"id":"007","n":1.5,"ok":true},{"id":"008","n":2,"extra":"x"}]`,
			`[["007" 1.5 true <nil>] ["008" 2.0 <nil> "x"]]`},
		{"ndjson", "{\"a\":12345678901234567890}\n{\"a\":1}\n", `[["12345678901234567890"] ["1"]]`},
		{"table json", `{"columns":["Code",{"key":"v","label":"Value","type":"number"}],"rows":[["01",1],["02",2]]}`,
			`[["01" 1] ["02" 2]]`},
		{"array of arrays", `[["a","b"],[1,"x"],[2,"y"]]`, `[[1 "x"] [2 "y"]]`},
		{"table json with object rows by key", `{"columns":[{"key":"id","label":"Order ID","type":"text"},{"key":"n","label":"N"}],"rows":[{"id":"007","n":1},{"n":2,"id":"008"}]}`,
			`[["007" 1] ["008" 2]]`},
		{"nested values as json text", `[{"a":{"b":[1,2]}}]`, `[["{\"b\":[1,2]}"]]`},
		{"empty text apart from null", `[{"a":"","b":null},{"a":null,"b":"x"},{"b":""}]`,
			`[["" <nil>] [<nil> "x"] [<nil> ""]]`},
		// A cell of only spaces is empty, in JSON too; empty text stays apart.
		{"empty text in ndjson", "{\"a\":\"\",\"n\":1}\n{\"a\":\" \",\"n\":null}\n", `[["" 1] [<nil> <nil>]]`},
		{"empty text in table json", `{"columns":["a","b"],"rows":[["",null],[null,""]]}`, `[["" <nil>] [<nil> ""]]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			f, err := fx.ingestBytes("x.json", []byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, r := range fx.rows(f.Tables[0].ID) {
				var cells []string
				for _, v := range r {
					if s, ok := v.(string); ok {
						cells = append(cells, fmt.Sprintf("%q", s))
					} else {
						cells = append(cells, fmt.Sprint(v))
					}
				}
				parts = append(parts, "["+strings.Join(cells, " ")+"]")
			}
			if got := "[" + strings.Join(parts, " ") + "]"; got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestXLSXTypes(t *testing.T) {
	t.Parallel()
	x := excelize.NewFile()
	x.SetSheetRow("Sheet1", "A1", &[]any{"Customer ID", "When", "Amount", "Note"})
	dateStyle, _ := x.NewStyle(&excelize.Style{NumFmt: 14})
	for i := 2; i <= 30; i++ {
		x.SetCellStr("Sheet1", fmt.Sprintf("A%d", i), fmt.Sprintf("%05d", i))
		x.SetCellValue("Sheet1", fmt.Sprintf("B%d", i), 45306+i)
		x.SetCellStyle("Sheet1", fmt.Sprintf("B%d", i), fmt.Sprintf("B%d", i), dateStyle)
		x.SetCellValue("Sheet1", fmt.Sprintf("C%d", i), float64(i)+0.25)
	}
	x.NewSheet("Empty")
	p := filepath.Join(t.TempDir(), "t.xlsx")
	if err := x.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t)
	f, err := fx.ingest(p, "t.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tables) != 1 {
		t.Fatalf("got %d tables, want 1 (empty sheets skipped)", len(f.Tables))
	}
	var types []string
	for _, c := range f.Tables[0].Columns {
		types = append(types, c.Type)
	}
	if got := strings.Join(types, ","); got != "text,date,decimal,text" {
		t.Errorf("types: got %s", got)
	}
	rows := fx.rows(f.Tables[0].ID)
	if rows[0][0] != "00002" || rows[0][1] != "2024-01-17" {
		t.Errorf("first row: got %v", rows[0])
	}
}

// TestBadInputsRefused feeds damaged and hostile files: each must be refused
// with a 4xx that names the problem, quickly and in bounded memory.
func TestBadInputsRefused(t *testing.T) {
	t.Parallel()
	random := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	good := filepath.Join(sheetjsDir(), "AutoFilter.xlsx")
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		content    []byte
		code       datadesk.Code
		says       string
	}{
		{"random bytes as xlsx", "r.xlsx", random, datadesk.Invalid, "not a zip archive"},
		{"random bytes as xls", "r.xls", random, datadesk.Unsupported, "not a binary Excel"},
		{"compound-file magic then random bytes", "r.xls", append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, random...), datadesk.Invalid, "not a readable Excel 5-2003"},
		{"an XLS cut in half", "half.xls", halfXLS(t), datadesk.Invalid, "not a readable Excel 5-2003"},
		{"random bytes as csv", "r.csv", append([]byte{0}, random...), datadesk.Invalid, "binary data"},
		{"random bytes as json", "r.json", random, datadesk.Invalid, "JSON"},
		{"truncated zip", "t.xlsx", goodBytes[:len(goodBytes)/2], datadesk.Invalid, "damaged or truncated"},
		{"zip bomb", "bomb.xlsx", zipBomb(t), datadesk.Invalid, "zip bomb"},
		{"column XFD on every row", "wide.xlsx", xfdSheet(t), datadesk.TooLarge, "loads at most 781 at its memory limit"},
		{"empty csv", "e.csv", []byte{}, datadesk.Invalid, "empty"},
		{"unknown type", "x.exe", []byte("MZ"), datadesk.Unsupported, "cannot be uploaded"},
		{"fake png", "x.png", []byte("hello"), datadesk.Invalid, "not a png"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			_, err := fx.ingestBytes(tc.file, tc.content)
			if got := datadesk.ErrorCode(err); got != tc.code {
				t.Fatalf("got %s (%v), want %s", got, err, tc.code)
			}
			if msg := datadesk.AsError(err).Message; !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not say %q", msg, tc.says)
			}
		})
	}
}

// halfXLS is the first half of a corpus XLS file.
func halfXLS(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join(sheetjsDir(), "formula_stress_test.xls"))
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)/2]
}

func zipBomb(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("xl/workbook.xml")
	w.Write([]byte("<workbook/>"))
	w, _ = zw.Create("xl/worksheets/sheet1.xml")
	zeros := make([]byte, 1<<20)
	for i := 0; i < 64; i++ {
		w.Write(zeros)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// xfdSheet is a tiny workbook, written by hand, whose every row has a cell
// in column XFD, the last one Excel has.
func xfdSheet(t *testing.T) []byte { return sparseSheet(t, "XFD", 1000) }

// sparseSheet is a workbook of rows with a cell in column A and one in
// column col.
func sparseSheet(t *testing.T, col string, rows int) []byte {
	var sheet strings.Builder
	sheet.WriteString(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&sheet, `<row r="%d"><c r="A%d"><v>%d</v></c><c r="%s%d"><v>1</v></c></row>`, i, i, i, col, i)
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	parts := map[string]string{
		"[Content_Types].xml":        `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`,
		"_rels/.rels":                `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml":            `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
		"xl/worksheets/sheet1.xml":   sheet.String(),
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range parts {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPlainFilesStored(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f, err := fx.ingestBytes("notes.txt", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tables) != 0 || f.ContentType != "text/plain; charset=utf-8" {
		t.Errorf("got %d tables, %s", len(f.Tables), f.ContentType)
	}
}

// TestXLSFormulas: the XLS readers leave formula cells empty; their cached
// results are read from the FORMULA records, and the report says so.
func TestXLSFormulas(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	f, err := fx.ingest(filepath.Join(sheetjsDir(), "formulae_test_simple.xls"), "f.xls")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(f.Tables[0].Report.Notes, " ")
	if !strings.Contains(notes, "19 formula cells") {
		t.Errorf("notes %q", notes)
	}
	// The same workbook saved as XLSX is the reference.
	x, err := fx.ingest(filepath.Join(sheetjsDir(), "formulae_test_simple.xlsx"), "f.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	got, want := fx.rows(f.Tables[0].ID), fx.rows(x.Tables[0].ID)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("xls rows %v\nxlsx rows %v", got, want)
	}
}

// TestXLSX1904Dates: a workbook in the 1904 date system counts day numbers
// from 1904-01-01.
func TestXLSX1904Dates(t *testing.T) {
	t.Parallel()
	x := excelize.NewFile()
	yes := true
	if err := x.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes}); err != nil {
		t.Fatal(err)
	}
	style, _ := x.NewStyle(&excelize.Style{NumFmt: 14})
	x.SetCellStr("Sheet1", "A1", "When")
	x.SetCellValue("Sheet1", "A2", 43830) // 2024-01-01 in the 1904 system
	x.SetCellStyle("Sheet1", "A2", "A2", style)
	p := filepath.Join(t.TempDir(), "d.xlsx")
	if err := x.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t)
	f, err := fx.ingest(p, "d.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Tables[0].Columns[0]; c.Type != typing.TypeDate {
		t.Fatalf("type %s (%s)", c.Type, c.Reason)
	}
	if got := fx.rows(f.Tables[0].ID)[0][0]; got != "2024-01-01" {
		t.Errorf("got %v, want 2024-01-01", got)
	}
}

// TestJSONWrappedRecords: an API's answer wraps its records in one key
// of one object ({"data": [...], "count": 2}); it was read as one row
// with the records as JSON text in a "data" column. The records are now
// the table, and the notes name the key read and the keys left out.
// NDJSON whose records hold such an array, and one object without
// records, are read as before.
func TestJSONWrappedRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		keys          []string
		want          [][]any
		note          string
	}{
		{"records after metadata", `{"count": 2, "meta": {"page": 1, "x": [1, {"y": "]"}]}, "data": [{"a": 1, "b": "x"}, {"a": 2, "b": "}"}], "next": null}`,
			[]string{"a", "b"}, [][]any{{int64(1), "x"}, {int64(2), "}"}}, `records read from "data"; left out: "count", "meta", "next"`},
		{"a header array first", "{\"results\": [[\"h1\", \"h2\"], [1, 2], [3, 4]]}\n",
			[]string{"h1", "h2"}, [][]any{{int64(1), int64(2)}, {int64(3), int64(4)}}, `records read from "results"`},
		{"NDJSON whose records hold arrays", "{\"items\": [{\"sku\": \"A\"}], \"order\": 1}\n{\"items\": [], \"order\": 2}\n",
			[]string{"items", "order"}, [][]any{{`[{"sku":"A"}]`, int64(1)}, {`[]`, int64(2)}}, "records one per line"},
		{"one object without records", `{"tags": ["a", "b"], "n": 1}`,
			[]string{"tags", "n"}, [][]any{{`["a","b"]`, int64(1)}}, "records one per line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			f, err := fx.ingestBytes("a.json", []byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			tb := f.Tables[0]
			fx.checkTable(tb, tc.keys, tc.want)
			if notes := strings.Join(tb.Report.Notes, " | "); !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q among them", notes, tc.note)
			}
		})
	}
}
