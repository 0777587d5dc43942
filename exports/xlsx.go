package exports

import (
	"archive/zip"

	"fmt"
	"io"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"

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
// written as text and their columns named on a Notes sheet. The zip is
// written straight to w through excelize's StreamWriter and zip writer
// hook, so memory stays flat however many rows there are.
func WriteXLSX(w io.Writer, src Source, opts Options) (*Result, error) {
	x, err := newXLSXWriter(src, opts)
	if err != nil {
		return nil, err
	}
	defer x.f.Close()
	if err := x.startSheet(); err != nil {
		return nil, err
	}
	if err := src.Rows(x.row); err != nil {
		return nil, err
	}
	if x.res.Rows != src.Count {
		return nil, fmt.Errorf("exports: the table has %d rows, not the %d counted", x.res.Rows, src.Count)
	}
	if err := x.finishSheet(); err != nil {
		return nil, err
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
	// excelize builds the whole zip in a buffer; its zip-writer hook lets
	// the archive go straight to w instead, deflated by klauspost's flate
	// at its fastest level, several times the speed of the standard
	// library's default level for a part a tenth larger.
	x.f.SetZipWriter(func(io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(w)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, flate.BestSpeed)
		})
		return zw
	})
	if _, err := x.f.WriteToBuffer(); err != nil {
		return nil, err
	}
	return x.res, nil
}

// xlsxWriter writes a table's rows across as many sheets as they need.
type xlsxWriter struct {
	f        *excelize.File
	src      Source
	styles   *cellStyles
	base     string // the first sheet's name
	labels   []string
	header   []any
	lastCol  string
	perSheet int64

	res       *Result
	notes     columnNotes
	sw        *excelize.StreamWriter
	sheet     string
	sheetRows int
	cells     []any
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
	headerStyle, err := x.f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"DDEBF7"}},
		Border: []excelize.Border{{Type: "bottom", Color: "8EA9DB", Style: 1}}})
	if err != nil {
		return fail(err)
	}
	if x.styles, err = newCellStyles(x.f); err != nil {
		return fail(err)
	}
	x.header = make([]any, len(x.labels))
	for i, l := range x.labels {
		x.header[i] = excelize.Cell{StyleID: headerStyle, Value: l}
	}
	if x.lastCol, err = excelize.ColumnNumberToName(max(len(src.Columns), 1)); err != nil {
		return fail(err)
	}
	return x, nil
}

// startSheet finishes the current sheet, if any, and starts the next with
// its header, column widths and frozen header row. The stream writer
// writes the dimension first, so the sheet's row count is worked out from
// the total before its rows come.
func (x *xlsxWriter) startSheet() error {
	if err := x.finishSheet(); err != nil {
		return err
	}
	x.res.Sheets++
	x.sheet = x.base
	if x.res.Sheets > 1 {
		x.sheet = sheetName(fmt.Sprintf("%s (%d)", x.base, x.res.Sheets))
		if _, err := x.f.NewSheet(x.sheet); err != nil {
			return err
		}
	}
	rows := min(max(x.src.Count-x.res.Rows, 0), x.perSheet)
	if err := x.f.SetSheetDimension(x.sheet, fmt.Sprintf("A1:%s%d", x.lastCol, rows+1)); err != nil {
		return err
	}
	var err error
	if x.sw, err = x.f.NewStreamWriter(x.sheet); err != nil {
		return err
	}
	for i, c := range x.src.Columns {
		if err := x.sw.SetColWidth(i+1, i+1, colWidth(c, x.labels[i])); err != nil {
			return err
		}
	}
	if err := x.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	x.sheetRows = 0
	return x.sw.SetRow("A1", x.header)
}

// finishSheet makes the sheet's rows an Excel table (a filter on each
// header) and flushes it.
func (x *xlsxWriter) finishSheet() error {
	if x.sw == nil {
		return nil
	}
	last := max(x.sheetRows+1, 2)
	if err := x.sw.AddTable(&excelize.Table{Range: fmt.Sprintf("A1:%s%d", x.lastCol, last),
		Name: fmt.Sprintf("Data%d", x.res.Sheets), StyleName: "TableStyleLight9"}); err != nil {
		return err
	}
	return x.sw.Flush()
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
	ref, _ := excelize.CoordinatesToCellName(1, x.sheetRows+1)
	return x.sw.SetRow(ref, x.cells[:len(row)])
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
