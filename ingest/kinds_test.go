package ingest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// kindCase is a small workbook that shows one thing a cell's kind decides,
// and what its first sheet must become.
type kindCase struct {
	name  string
	build func(t *testing.T) []byte
	// types and reasons per column; a reason is matched as a prefix.
	types   []string
	reasons []string
	// rows are the stored values, printed with %v.
	rows []string
}

// buildXLSX writes a workbook made by fill with excelize.
func buildXLSX(fill func(x *excelize.File)) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		x := excelize.NewFile()
		fill(x)
		var b bytes.Buffer
		if err := x.Write(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

func style(t *testing.T, x *excelize.File, s *excelize.Style) int {
	id, err := x.NewStyle(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCellKinds: each workbook shows a point of what spreadsheet cells
// carry beyond their text; the stored types, reasons and values are
// checked. The workbooks are kept in testdata/kinds, written again from
// their recipes with -update.
func TestCellKinds(t *testing.T) {
	t.Parallel()
	var tt *testing.T
	cases := []kindCase{{
		name: "date column with a total row",
		build: buildXLSX(func(x *excelize.File) {
			date := style(tt, x, &excelize.Style{NumFmt: 14})
			x.SetSheetRow("Sheet1", "A1", &[]any{"Day", "Visitors"})
			for i := 0; i < 24; i++ {
				cell := fmt.Sprintf("A%d", i+2)
				x.SetCellValue("Sheet1", cell, 44105+i) // 2020-10-01 on
				x.SetCellStyle("Sheet1", cell, cell, date)
				x.SetCellValue("Sheet1", fmt.Sprintf("B%d", i+2), 10+i)
			}
			x.SetSheetRow("Sheet1", "A26", &[]any{"Total", 516})
		}),
		types:   []string{"text", "integer"},
		reasons: []string{`text: 24 dates and 1 text value ("Total")`, "integer"},
		rows:    []string{"[2020-10-01 10]", "[2020-10-02 11]"},
	}, {
		name: "booleans",
		build: buildXLSX(func(x *excelize.File) {
			x.SetSheetRow("Sheet1", "A1", &[]any{"Paid", "Flag or number"})
			x.SetSheetRow("Sheet1", "A2", &[]any{true, true})
			x.SetSheetRow("Sheet1", "A3", &[]any{false, 1})
		}),
		types:   []string{"boolean", "text"},
		reasons: []string{"boolean: all 2 cells are TRUE or FALSE", "text: 1 number and 1 boolean"},
		rows:    []string{"[true TRUE]", "[false 1]"},
	}, {
		name: "errors",
		build: rawXLSX(`<row r="1"><c r="A1" t="inlineStr"><is><t>Ratio</t></is></c></row>` +
			`<row r="2"><c r="A2"><v>0.5</v></c></row>` +
			`<row r="3"><c r="A3" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>` +
			`<row r="4"><c r="A4"><v>2</v></c></row>`),
		types:   []string{"text"},
		reasons: []string{`text: 2 numbers and 1 error ("#DIV/0!")`},
		rows:    []string{"[0.5]", "[#DIV/0!]", "[2]"},
	}, {
		name: "times of day",
		build: buildXLSX(func(x *excelize.File) {
			clock := style(tt, x, &excelize.Style{NumFmt: 21})
			x.SetCellStr("Sheet1", "A1", "Opens")
			for i, v := range []float64{0.3541666666666667, 0.5} {
				cell := fmt.Sprintf("A%d", i+2)
				x.SetCellFloat("Sheet1", cell, v, -1, 64)
				x.SetCellStyle("Sheet1", cell, cell, clock)
			}
		}),
		types:   []string{"time"},
		reasons: []string{"time: all 2 cells are times of day"},
		rows:    []string{"[08:30:00]", "[12:00:00]"},
	}, {
		name: "custom date format and date-times with seconds",
		build: buildXLSX(func(x *excelize.File) {
			day := `dd/mm/yyyy;@`
			stamp := `[$-409]yyyy-mm-dd hh:mm:ss`
			d := style(tt, x, &excelize.Style{CustomNumFmt: &day})
			s := style(tt, x, &excelize.Style{CustomNumFmt: &stamp})
			x.SetSheetRow("Sheet1", "A1", &[]any{"Due", "Logged"})
			x.SetCellValue("Sheet1", "A2", 44105)
			x.SetCellValue("Sheet1", "B2", 44105.35416666667)
			x.SetCellValue("Sheet1", "A3", 44106)
			x.SetCellValue("Sheet1", "B3", 44106.50001157407)
			x.SetCellStyle("Sheet1", "A2", "A3", d)
			x.SetCellStyle("Sheet1", "B2", "B3", s)
		}),
		types:   []string{"date", "timestamp"},
		reasons: []string{"date: all 2 cells are dates", "timestamp"},
		rows:    []string{"[2020-10-01 2020-10-01T08:30:00]", "[2020-10-02 2020-10-02T12:00:01]"},
	}, {
		name: "1904 date system",
		build: buildXLSX(func(x *excelize.File) {
			yes := true
			x.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes})
			date := style(tt, x, &excelize.Style{NumFmt: 14})
			x.SetCellStr("Sheet1", "A1", "When")
			x.SetCellValue("Sheet1", "A2", 43830) // 2024-01-01 in the 1904 system
			x.SetCellStyle("Sheet1", "A2", "A2", date)
		}),
		types: []string{"date"},
		rows:  []string{"[2024-01-01]"},
	}, {
		name: "numbers with a text value",
		build: buildXLSX(func(x *excelize.File) {
			x.SetSheetRow("Sheet1", "A1", &[]any{"Score"})
			x.SetSheetRow("Sheet1", "A2", &[]any{1.5})
			x.SetSheetRow("Sheet1", "A3", &[]any{"absent"})
			x.SetSheetRow("Sheet1", "A4", &[]any{3})
		}),
		types:   []string{"text"},
		reasons: []string{`text: 2 numbers and 1 text value ("absent")`},
		rows:    []string{"[1.5]", "[absent]", "[3]"},
	}, {
		// "n/a" is a mark of a missing value: the column is numeric.
		name: "numbers with a mark of a missing value",
		build: buildXLSX(func(x *excelize.File) {
			x.SetSheetRow("Sheet1", "A1", &[]any{"Score"})
			x.SetSheetRow("Sheet1", "A2", &[]any{1.5})
			x.SetSheetRow("Sheet1", "A3", &[]any{"n/a"})
			x.SetSheetRow("Sheet1", "A4", &[]any{3})
		}),
		types:   []string{"decimal"},
		reasons: []string{`decimal: all 2 values are numbers; 1 cells marked as missing ("n/a") are stored empty`},
		rows:    []string{"[1.5]", "[<nil>]", "[3.0]"},
	}, {
		name: "cells with an empty style attribute",
		build: rawXLSX(`<row r="1"><c r="A1" s="" t="inlineStr"><is><t>Qty</t></is></c></row>` +
			`<row r="2"><c r="A2" s=""><v>7</v></c></row>`),
		types: []string{"integer"},
		rows:  []string{"[7]"},
	}, {
		name: "a date-time number written back by a spreadsheet",
		build: buildXLSX(func(x *excelize.File) {
			stamp := style(tt, x, &excelize.Style{NumFmt: 22})
			x.SetCellStr("Sheet1", "A1", "At")
			x.SetCellFloat("Sheet1", "A2", 45717.395833333336, -1, 64)
			x.SetCellStyle("Sheet1", "A2", "A2", stamp)
		}),
		types: []string{"timestamp"},
		rows:  []string{"[2025-03-01T09:30:00]"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tt = t
			p := filepath.Join("testdata", "kinds", strings.ReplaceAll(tc.name, " ", "_")+".xlsx")
			if *update {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, tc.build(t), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fx := newFixture(t)
			f, err := fx.ingest(p, filepath.Base(p))
			if err != nil {
				t.Fatal(err)
			}
			tb := f.Tables[0]
			for i, want := range tc.types {
				if i >= len(tb.Columns) {
					t.Fatalf("got %d columns, want %d", len(tb.Columns), len(tc.types))
				}
				c := tb.Columns[i]
				if c.Type != want {
					t.Errorf("column %s: got type %s (%s), want %s", c.Key, c.Type, c.Reason, want)
				}
				if i < len(tc.reasons) && !strings.HasPrefix(c.Reason, tc.reasons[i]) {
					t.Errorf("column %s: got reason %q, want %q", c.Key, c.Reason, tc.reasons[i])
				}
			}
			rows := fx.rows(tb.ID)
			for i, want := range tc.rows {
				if i >= len(rows) {
					t.Fatalf("got %d rows, want at least %d", len(rows), len(tc.rows))
				}
				if got := fmt.Sprint(rows[i]); got != want {
					t.Errorf("row %d: got %s, want %s", i+1, got, want)
				}
			}
		})
	}
}

// rawXLSX writes a one-sheet workbook around sheetData rows written by
// hand, for cells excelize does not write (errors, empty attributes).
func rawXLSX(rows string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		parts := map[string]string{
			"[Content_Types].xml":        `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`,
			"_rels/.rels":                `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
			"xl/workbook.xml":            `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
			"xl/_rels/workbook.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
			"xl/worksheets/sheet1.xml":   `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + rows + `</sheetData></worksheet>`,
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
}
