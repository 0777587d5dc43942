package exports

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// WriteXLSX writes the table as a workbook: a styled, frozen and filtered
// header, typed cells (identifiers as text, dates with a date format,
// decimals with their scale), and further sheets past Excel's row limit.
// Each sheet declares the range it uses, from src.Count, since readers
// such as openpyxl's read-only mode read only that range. Values Excel
// cannot hold (dates before 1900, numbers of more than 15 digits) are
// written as text and their columns named on a Notes sheet.
//
// excelize makes the workbook around the rows (styles, the header, the
// tables, the notes) with its ordinary API; the rows themselves are
// written as XML directly (rowXML, the XML excelize's StreamWriter writes
// for the same values) and deflated a block at a time on every core into
// a temporary file (sheetBodies), then joined with excelize's parts into
// the zip written to w. Memory stays flat however many rows there are.
func WriteXLSX(w io.Writer, src Source, opts Options) (*Result, error) {
	x, err := newXLSXWriter(src, opts)
	if err != nil {
		return nil, err
	}
	defer x.f.Close()
	if x.body, err = newSheetBodies(opts.TempDir); err != nil {
		return nil, err
	}
	defer x.body.close()
	if err := x.startSheet(); err != nil {
		return nil, err
	}
	rowsErr := src.Rows(x.row)
	if err := errors.Join(rowsErr, x.body.finish()); err != nil {
		return nil, err
	}
	if x.res.Rows != src.Count {
		return nil, fmt.Errorf("exports: the table has %d rows, not the %d counted", x.res.Rows, src.Count)
	}
	x.res.Notes = x.notes.list
	extra := opts.Extra
	if s, ok := notesSheet(x.res); ok {
		extra = append(extra, s)
	}
	for _, s := range extra {
		if err := writeSheet(x.f, s); err != nil {
			return nil, err
		}
	}
	if err := x.writeZip(w); err != nil {
		return nil, err
	}
	return x.res, nil
}

// writeZip writes the workbook: excelize's parts as they are, and each
// data sheet's part with its rows.
func (x *xlsxWriter) writeZip(w io.Writer) error {
	skeleton, err := x.f.WriteToBuffer()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(skeleton.Bytes()), int64(skeleton.Len()))
	if err != nil {
		return err
	}
	parts, err := sheetParts(zr)
	if err != nil {
		return err
	}
	data := map[string]int{}
	for i, name := range x.sheets {
		part, ok := parts[name]
		if !ok {
			return fmt.Errorf("exports: the workbook has no part for sheet %q", name)
		}
		data[part] = i
	}
	zw := zip.NewWriter(w)
	for _, f := range zr.File {
		if i, ok := data[f.Name]; ok {
			err = x.body.writeSheetPart(zw, f, i)
		} else {
			err = zw.Copy(f)
		}
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// sheetParts maps a workbook's sheet names to their parts.
func sheetParts(zr *zip.Reader) (map[string]string, error) {
	read := func(name string, v any) error {
		f, err := zr.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		return xml.NewDecoder(f).Decode(v)
	}
	var book struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			ID   string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := read("xl/workbook.xml", &book); err != nil {
		return nil, fmt.Errorf("exports: the workbook part: %w", err)
	}
	if err := read("xl/_rels/workbook.xml.rels", &rels); err != nil {
		return nil, fmt.Errorf("exports: the workbook's relationships: %w", err)
	}
	targets := map[string]string{}
	for _, r := range rels.Rels {
		t := strings.TrimPrefix(r.Target, "/")
		if !strings.HasPrefix(t, "xl/") {
			t = path.Join("xl", t)
		}
		targets[r.ID] = t
	}
	out := map[string]string{}
	for _, s := range book.Sheets {
		out[s.Name] = targets[s.ID]
	}
	return out, nil
}

// xlsxWriter writes a table's rows across as many sheets as they need.
type xlsxWriter struct {
	f           *excelize.File
	src         Source
	styles      *cellStyles
	headerStyle int
	base        string // the first sheet's name
	labels      []string
	lastCol     string
	perSheet    int64

	res       *Result
	notes     columnNotes
	sheets    []string // the data sheets, in order
	sheet     string
	sheetRows int
	cells     []any
	xml       *rowXML
	body      *sheetBodies
}

func newXLSXWriter(src Source, opts Options) (*xlsxWriter, error) {
	x := &xlsxWriter{f: excelize.NewFile(excelize.Options{}), src: src, res: &Result{}, perSheet: MaxSheetRows,
		labels: headerLabels(src.Columns), cells: make([]any, len(src.Columns))}
	if opts.sheetRows > 0 {
		x.perSheet = int64(opts.sheetRows)
	}
	x.base = opts.SheetName
	if x.base == "" {
		x.base = "Data"
	}
	x.base = sheetName(x.base)
	fail := func(err error) (*xlsxWriter, error) {
		x.f.Close()
		return nil, err
	}
	if err := x.f.SetSheetName("Sheet1", x.base); err != nil {
		return fail(err)
	}
	var err error
	x.headerStyle, err = x.f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"DDEBF7"}},
		Border: []excelize.Border{{Type: "bottom", Color: "8EA9DB", Style: 1}}})
	if err != nil {
		return fail(err)
	}
	if x.styles, err = newCellStyles(x.f); err != nil {
		return fail(err)
	}
	if x.lastCol, err = excelize.ColumnNumberToName(max(len(src.Columns), 1)); err != nil {
		return fail(err)
	}
	if x.xml, err = newRowXML(len(src.Columns)); err != nil {
		return fail(err)
	}
	return x, nil
}

// startSheet starts the next data sheet: its header, column widths,
// frozen header row, declared range and table, made with excelize's
// ordinary API; its rows go to the sheet bodies. The range is worked out
// from the total before the rows come.
func (x *xlsxWriter) startSheet() error {
	if x.res.Sheets > 0 {
		x.body.nextSheet()
	}
	x.res.Sheets++
	x.sheet = x.base
	if x.res.Sheets > 1 {
		x.sheet = sheetName(fmt.Sprintf("%s (%d)", x.base, x.res.Sheets))
		if _, err := x.f.NewSheet(x.sheet); err != nil {
			return err
		}
	}
	x.sheets = append(x.sheets, x.sheet)
	rows := min(max(x.src.Count-x.res.Rows, 0), x.perSheet)
	for i, c := range x.src.Columns {
		if err := x.f.SetColWidth(x.sheet, x.xml.cols[i], x.xml.cols[i], colWidth(c, x.labels[i])); err != nil {
			return err
		}
		if err := x.f.SetCellStr(x.sheet, x.xml.cols[i]+"1", x.labels[i]); err != nil {
			return err
		}
	}
	if len(x.src.Columns) > 0 {
		if err := x.f.SetCellStyle(x.sheet, "A1", x.lastCol+"1", x.headerStyle); err != nil {
			return err
		}
	}
	if err := x.f.SetPanes(x.sheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	if err := x.f.AddTable(x.sheet, &excelize.Table{Range: fmt.Sprintf("A1:%s%d", x.lastCol, max(rows+1, 2)),
		Name: fmt.Sprintf("Data%d", x.res.Sheets), StyleName: "TableStyleLight9"}); err != nil {
		return err
	}
	if err := x.f.SetSheetDimension(x.sheet, fmt.Sprintf("A1:%s%d", x.lastCol, rows+1)); err != nil {
		return err
	}
	x.sheetRows = 0
	return nil
}

// row writes one row, starting a sheet when this one is full; cells longer
// than Excel allows are cut and listed.
func (x *xlsxWriter) row(row []any) error {
	if int64(x.sheetRows) == x.perSheet {
		if err := x.startSheet(); err != nil {
			return err
		}
	}
	x.sheetRows++
	x.res.Rows++
	if x.res.Rows > x.src.Count {
		return fmt.Errorf("exports: the table has more rows than the %d counted", x.src.Count)
	}
	for i, v := range row {
		if s, ok := v.(string); ok {
			if n := utf8.RuneCountInString(s); n > MaxCellChars {
				x.res.TruncatedCount++
				if len(x.res.Truncated) < maxNotedCells {
					ref, _ := excelize.CoordinatesToCellName(i+1, x.sheetRows+1)
					x.res.Truncated = append(x.res.Truncated, TruncatedCell{Sheet: x.sheet, Cell: ref, Column: x.src.Columns[i].Key, Length: n})
				}
				v = string([]rune(s)[:MaxCellChars])
			}
		}
		cell, note, err := x.styles.xlsxCell(v, &x.src.Columns[i])
		if err != nil {
			return err
		}
		if note != "" {
			x.notes.add(x.labels[i], note)
		}
		x.cells[i] = cell
	}
	x.body.wrote(x.xml.appendRow(x.body.rows(), x.sheetRows+1, x.cells[:len(row)]))
	return nil
}

// colWidth is a column's width in characters: room for its label and its
// type's usual values.
func colWidth(c catalog.Column, label string) float64 {
	w := float64(utf8.RuneCountInString(label)) + 4
	switch c.Type {
	case typing.TypeTimestamp:
		w = max(w, 20)
	case typing.TypeDate:
		w = max(w, 12)
	case typing.TypeText:
		w = max(w, 14)
		if c.Identifier {
			w = max(w, 16)
		}
	default:
		w = max(w, 12)
	}
	return min(w, 60)
}
