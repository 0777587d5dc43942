package ingest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"datadesk"
)

// handWorkbook writes an XLSX by hand: its workbook lists the sheet parts
// of sheets (by relationship id rId1..), and parts holds each worksheet's
// XML by file name under xl/worksheets/.
func handWorkbook(t *testing.T, sheets []string, parts map[string]string) []byte {
	t.Helper()
	var list, rels strings.Builder
	for i, target := range sheets {
		fmt.Fprintf(&list, `<sheet name="S%d" sheetId="%d" r:id="rId%d"/>`, i+1, i+1, i+1)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/%s"/>`, i+1, target)
	}
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
		"_rels/.rels":         `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml": `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>` +
			list.String() + `</sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels.String() + `</Relationships>`,
	}
	for name, xml := range parts {
		files["xl/worksheets/"+name] = xml
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rowsXML is a worksheet of rows rows of cols numbers.
func rowsXML(rows, cols int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
	for r := 1; r <= rows; r++ {
		fmt.Fprintf(&b, `<row r="%d">`, r)
		for c := 0; c < cols; c++ {
			fmt.Fprintf(&b, `<c r="%c%d"><v>%d</v></c>`, 'A'+c, r, r)
		}
		b.WriteString(`</row>`)
	}
	b.WriteString(`</sheetData></worksheet>`)
	return b.String()
}

// TestWorksheetListedOnce: a 26 KB workbook listing one worksheet 5,000
// times made 5,000 tables in 34 s. A workbook that lists a part twice is
// refused, at once.
func TestWorksheetListedOnce(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	sheets := make([]string, 5000)
	for i := range sheets {
		sheets[i] = "sheet1.xml"
	}
	start := time.Now()
	_, err := fx.ingestBytes("many.xlsx", handWorkbook(t, sheets, map[string]string{"sheet1.xml": rowsXML(200, 3)}))
	if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("got %v, want invalid naming the part listed twice", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	// The same part named in other letter cases is the same part: a
	// 164 KB workbook of 1,000 such names made 1,000 tables of 19,999,000
	// rows in 102 s.
	variants := []string{"sheet1.xml", "Sheet1.xml", "SHEET1.XML", "sHeEt1.xml"}
	_, err = fx.ingestBytes("cases.xlsx", handWorkbook(t, variants, map[string]string{"sheet1.xml": rowsXML(200, 3)}))
	if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("one part listed in four letter cases: got %v, want invalid naming the part listed twice", err)
	}
	if _, err := fx.ingestBytes("two.xlsx", handWorkbook(t, []string{"a.xml", "b.xml"},
		map[string]string{"a.xml": rowsXML(3, 2), "b.xml": rowsXML(4, 2)})); err != nil {
		t.Errorf("two sheets of their own: %v", err)
	}
}

// TestCellBudget: the cells read from one upload's sheets together are
// bounded, so rows that compress to nothing cannot multiply work.
func TestCellBudget(t *testing.T) {
	fx := newFixture(t)
	fx.in = New(Config{MaxUnzipSize: 256 << 20, MaxCells: 1000})
	book := handWorkbook(t, []string{"a.xml", "b.xml"}, map[string]string{"a.xml": rowsXML(300, 2), "b.xml": rowsXML(300, 2)})
	if _, err := fx.ingestBytes("big.xlsx", book); datadesk.ErrorCode(err) != datadesk.TooLarge || !strings.Contains(err.Error(), "1000 cells") {
		t.Errorf("got %v, want too_large naming the budget", err)
	}
	small := handWorkbook(t, []string{"a.xml", "b.xml"}, map[string]string{"a.xml": rowsXML(200, 2), "b.xml": rowsXML(200, 2)})
	if _, err := fx.ingestBytes("small.xlsx", small); err != nil {
		t.Errorf("within the budget: %v", err)
	}
}

// TestLongQuotedFieldRefusedAtOnce: a quoted CSV field of 8.4 million lines
// took 60 to 84 s to refuse, DuckDB's reader recording each of its lines
// as a reject. It is refused before DuckDB sees it.
func TestLongQuotedFieldRefusedAtOnce(t *testing.T) {
	fx := newFixture(t)
	fx.in = New(Config{MaxUnzipSize: 256 << 20, MaxLine: 1 << 20})
	var b bytes.Buffer
	b.WriteString("a,b\n1,\"")
	for range 600_000 {
		b.WriteString("x\n")
	}
	b.WriteString("\"\n2,3\n")
	start := time.Now()
	_, err := fx.ingestBytes("quoted.csv", b.Bytes())
	if datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), "line 2 is longer than 1048576 bytes") {
		t.Errorf("got %v, want invalid naming the line", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
	// Quoted fields within the limit, with newlines, quotes and a quote
	// in an unquoted field, are read.
	f, err := fx.ingestBytes("fine.csv", []byte("a,b\n1,\"two\nlines, \"\"quoted\"\"\"\n2,x\"y\n"))
	if err != nil || f.Tables[0].RowCount != 2 {
		t.Errorf("fine quoted fields: %v %+v", err, f)
	}
}
