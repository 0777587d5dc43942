package exports

import (
	"archive/zip"
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"datadesk/engine"
)

// Spreadsheet limits.
const (
	// MaxSheetRows is how many data rows a sheet takes: Excel has 1,048,576
	// rows and the first holds the header.
	MaxSheetRows = 1_048_575
	// MaxCellChars is the most characters an Excel cell holds.
	MaxCellChars = 32_767
	// maxNotedCells bounds the cells listed on a notes sheet.
	maxNotedCells = 10_000
)

// Source is a table to write: its columns and its rows, streamed. Row values
// are string, int64, float64, json.Number, bool, time.Time or nil.
type Source struct {
	Columns []engine.Column
	Rows    func(yield func(row []any) error) error
}

// Options change how a table is written.
type Options struct {
	// BOM starts a CSV with a UTF-8 byte order mark, which Excel needs to
	// read UTF-8.
	BOM bool
	// SheetName names the first sheet; later ones get a number.
	SheetName string
	// Extra are sheets written after the data, such as AI labels.
	Extra []Sheet
	// sheetRows overrides MaxSheetRows, for tests.
	sheetRows int
}

// Sheet is a small extra sheet of text cells.
type Sheet struct {
	Name string
	Rows [][]string
}

// Result says what was written.
type Result struct {
	Rows   int64 `json:"rows"`
	Sheets int   `json:"sheets,omitempty"`
	// Truncated lists cells cut to Excel's cell size, also listed on the
	// workbook's Notes sheet.
	Truncated []TruncatedCell `json:"truncated,omitempty"`
	// TruncatedCount counts them all when the list is capped.
	TruncatedCount int64 `json:"truncated_count,omitempty"`
}

// TruncatedCell is a cell longer than Excel allows.
type TruncatedCell struct {
	Sheet  string `json:"sheet"`
	Cell   string `json:"cell"`
	Column string `json:"column"`
	Length int    `json:"length"`
}

// headerLabels are the column labels, or the keys when labels repeat
// (case-insensitively): Excel tables need unique headers.
func headerLabels(cols []engine.Column) []string {
	labels := make([]string, len(cols))
	seen := map[string]bool{}
	unique := true
	for i, c := range cols {
		l := c.Label
		if l == "" {
			l = c.Key
		}
		if seen[strings.ToLower(l)] {
			unique = false
		}
		seen[strings.ToLower(l)] = true
		labels[i] = l
	}
	if !unique {
		for i, c := range cols {
			labels[i] = c.Key
		}
	}
	return labels
}

func colWidth(c engine.Column, label string) float64 {
	w := float64(utf8.RuneCountInString(label)) + 4
	switch c.Type {
	case engine.TypeTimestamp:
		w = max(w, 20)
	case engine.TypeDate:
		w = max(w, 12)
	case engine.TypeText:
		w = max(w, 14)
		if c.Identifier {
			w = max(w, 16)
		}
	default:
		w = max(w, 12)
	}
	return min(w, 60)
}

// WriteXLSX writes the table as a workbook: a styled, frozen and filtered
// header, typed cells (identifiers as text, dates with a date format), and
// further sheets past Excel's row limit. The zip is written straight to w
// through excelize's StreamWriter and zip writer hook, so memory stays flat
// however many rows there are.
func WriteXLSX(w io.Writer, src Source, opts Options) (*Result, error) {
	f := excelize.NewFile(excelize.Options{})
	defer f.Close()
	base := opts.SheetName
	if base == "" {
		base = "Data"
	}
	base = sheetName(base)
	if err := f.SetSheetName("Sheet1", base); err != nil {
		return nil, err
	}
	headerStyle, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true},
		Fill:   excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"DDEBF7"}},
		Border: []excelize.Border{{Type: "bottom", Color: "8EA9DB", Style: 1}}})
	if err != nil {
		return nil, err
	}
	// Excel shows at most milliseconds; the cell's value keeps microseconds.
	dateFmt, tsFmt := "yyyy-mm-dd", "yyyy-mm-dd hh:mm:ss.000"
	dateStyle, err := f.NewStyle(&excelize.Style{CustomNumFmt: &dateFmt})
	if err != nil {
		return nil, err
	}
	tsStyle, err := f.NewStyle(&excelize.Style{CustomNumFmt: &tsFmt})
	if err != nil {
		return nil, err
	}
	labels := headerLabels(src.Columns)
	header := make([]any, len(labels))
	for i, l := range labels {
		header[i] = excelize.Cell{StyleID: headerStyle, Value: l}
	}
	lastCol, err := excelize.ColumnNumberToName(max(len(src.Columns), 1))
	if err != nil {
		return nil, err
	}

	res := &Result{}
	var (
		sw        *excelize.StreamWriter
		sheet     string
		sheetRows int
	)
	finish := func() error {
		if sw == nil {
			return nil
		}
		last := max(sheetRows+1, 2)
		if err := sw.AddTable(&excelize.Table{Range: fmt.Sprintf("A1:%s%d", lastCol, last),
			Name: fmt.Sprintf("Data%d", res.Sheets), StyleName: "TableStyleLight9"}); err != nil {
			return err
		}
		return sw.Flush()
	}
	start := func() error {
		if err := finish(); err != nil {
			return err
		}
		res.Sheets++
		sheet = base
		if res.Sheets > 1 {
			sheet = sheetName(fmt.Sprintf("%s (%d)", base, res.Sheets))
			if _, err := f.NewSheet(sheet); err != nil {
				return err
			}
		}
		if sw, err = f.NewStreamWriter(sheet); err != nil {
			return err
		}
		for i, c := range src.Columns {
			if err := sw.SetColWidth(i+1, i+1, colWidth(c, labels[i])); err != nil {
				return err
			}
		}
		if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
			return err
		}
		sheetRows = 0
		return sw.SetRow("A1", header)
	}
	if err := start(); err != nil {
		return nil, err
	}
	perSheet := MaxSheetRows
	if opts.sheetRows > 0 {
		perSheet = opts.sheetRows
	}
	cells := make([]any, len(src.Columns))
	err = src.Rows(func(row []any) error {
		if sheetRows == perSheet {
			if err := start(); err != nil {
				return err
			}
		}
		sheetRows++
		res.Rows++
		for i, v := range row {
			switch x := v.(type) {
			case nil:
				cells[i] = nil
			case string:
				if n := utf8.RuneCountInString(x); n > MaxCellChars {
					res.TruncatedCount++
					if len(res.Truncated) < maxNotedCells {
						ref, _ := excelize.CoordinatesToCellName(i+1, sheetRows+1)
						res.Truncated = append(res.Truncated, TruncatedCell{Sheet: sheet, Cell: ref, Column: src.Columns[i].Key, Length: n})
					}
					x = string([]rune(x)[:MaxCellChars])
				}
				cells[i] = x
			case json.Number:
				fv, err := x.Float64()
				if err != nil {
					cells[i] = x.String()
				} else {
					cells[i] = fv
				}
			case time.Time:
				style := dateStyle
				if src.Columns[i].Type == engine.TypeTimestamp {
					style = tsStyle
				}
				cells[i] = excelize.Cell{StyleID: style, Value: x}
			default:
				cells[i] = x
			}
		}
		ref, _ := excelize.CoordinatesToCellName(1, sheetRows+1)
		return sw.SetRow(ref, cells[:len(row)])
	})
	if err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	extra := opts.Extra
	if len(res.Truncated) > 0 {
		notes := Sheet{Name: "Notes", Rows: [][]string{{"Cells longer than Excel's 32,767 characters were cut to that length."}, {"sheet", "cell", "column", "length"}}}
		for _, t := range res.Truncated {
			notes.Rows = append(notes.Rows, []string{t.Sheet, t.Cell, t.Column, strconv.Itoa(t.Length)})
		}
		extra = append(extra, notes)
	}
	for _, s := range extra {
		name := sheetName(s.Name)
		if _, err := f.NewSheet(name); err != nil {
			return nil, err
		}
		esw, err := f.NewStreamWriter(name)
		if err != nil {
			return nil, err
		}
		for r, row := range s.Rows {
			vals := make([]any, len(row))
			for i, v := range row {
				vals[i] = v
			}
			ref, _ := excelize.CoordinatesToCellName(1, r+1)
			if err := esw.SetRow(ref, vals); err != nil {
				return nil, err
			}
		}
		if err := esw.Flush(); err != nil {
			return nil, err
		}
	}
	// excelize builds the whole zip in a buffer; its zip-writer hook lets
	// the archive go straight to w instead.
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(w) })
	if _, err := f.WriteToBuffer(); err != nil {
		return nil, err
	}
	return res, nil
}

// sheetName makes a valid sheet name: at most 31 characters, none of
// : \ / ? * [ ].
func sheetName(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '_'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 31 {
		s = string(r[:31])
	}
	if strings.TrimSpace(s) == "" {
		s = "Data"
	}
	return s
}

// formulaStarts are the first characters that make a spreadsheet run a cell
// as a formula.
const formulaStarts = "=+-@\t\r"

// Neutralize returns a text cell a spreadsheet will not run as a formula:
// text starting with = + - @ tab or carriage return gets a leading
// apostrophe. Only text is touched; numbers are never passed here.
func Neutralize(s string) string {
	if s != "" && strings.ContainsRune(formulaStarts, rune(s[0])) {
		return "'" + s
	}
	return s
}

func textCell(v any, typ string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if typ == engine.TypeTimestamp {
			return x.Format(engine.TimestampLayout)
		}
		return x.Format("2006-01-02")
	}
	return fmt.Sprint(v)
}

// WriteCSV writes the table as RFC 4180 CSV in UTF-8 with the labels as
// header; text cells that a spreadsheet would run as formulas are
// neutralised, numbers are written as they are.
func WriteCSV(w io.Writer, src Source, opts Options) (*Result, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	if opts.BOM {
		bw.WriteString("\uFEFF")
	}
	cw := csv.NewWriter(bw)
	labels := headerLabels(src.Columns)
	for i := range labels {
		labels[i] = Neutralize(labels[i])
	}
	if err := cw.Write(labels); err != nil {
		return nil, err
	}
	res := &Result{}
	rec := make([]string, len(src.Columns))
	err := src.Rows(func(row []any) error {
		res.Rows++
		for i, v := range row {
			s := textCell(v, src.Columns[i].Type)
			if _, isText := v.(string); isText {
				s = Neutralize(s)
			}
			rec[i] = s
		}
		return cw.Write(rec[:len(row)])
	})
	if err != nil {
		return nil, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return nil, err
	}
	return res, bw.Flush()
}

// jsonColumn is a column as table JSON carries it.
type jsonColumn struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Type  string `json:"type"`
}

// WriteJSON writes the table as table JSON: {"columns": [{key, label,
// type}], "rows": [[...]]}, numbers as JSON numbers (exactly), dates as ISO
// strings, identifiers as strings.
func WriteJSON(w io.Writer, src Source) (*Result, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cols := make([]jsonColumn, len(src.Columns))
	for i, c := range src.Columns {
		cols[i] = jsonColumn{Key: c.Key, Label: c.Label, Type: c.Type}
	}
	head, err := json.Marshal(cols)
	if err != nil {
		return nil, err
	}
	bw.WriteString(`{"columns":`)
	bw.Write(head)
	bw.WriteString(`,"rows":[`)
	res := &Result{}
	out := make([]any, len(src.Columns))
	err = src.Rows(func(row []any) error {
		if res.Rows > 0 {
			bw.WriteByte(',')
		}
		res.Rows++
		for i, v := range row {
			if t, ok := v.(time.Time); ok {
				out[i] = textCell(t, src.Columns[i].Type)
			} else {
				out[i] = v
			}
		}
		b, err := json.Marshal(out[:len(row)])
		if err != nil {
			return err
		}
		_, err = bw.Write(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	bw.WriteString("]}\n")
	return res, bw.Flush()
}
