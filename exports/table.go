package exports

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
)

// Spreadsheet limits.
const (
	// MaxSheetRows is how many data rows a sheet takes: Excel has 1,048,576
	// rows and the first holds the header.
	MaxSheetRows = 1_048_575
	// MaxCellChars is the most characters an Excel cell holds; ingest
	// refuses longer cells with the same bound.
	MaxCellChars = engine.MaxCellChars
	// maxNotedCells bounds the cells listed on a notes sheet.
	maxNotedCells = 10_000
)

// Source is a table to write: its columns and its rows, streamed. Row values
// are string, int64, float64, json.Number, bool, time.Time or nil.
type Source struct {
	Columns []catalog.Column
	// Count is how many rows Rows yields. A workbook declares each
	// sheet's range before its rows, from Count; WriteXLSX fails when
	// Rows yields another number.
	Count int64
	Rows  func(yield func(row []any) error) error
	// CSV, if set, writes the rows as CSV without a header the way
	// WriteCSV does, faster; it answers false, having written nothing,
	// when it cannot, and WriteCSV writes them from Rows.
	CSV func(w io.Writer) (bool, error)
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
	// TempDir is where an XLSX export keeps its rows, deflated, until the
	// workbook is written (about a tenth of their XML); empty means the
	// system's temporary directory.
	TempDir string
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
	// Notes name the columns with values written as text because Excel
	// cannot hold them (dates before 1900, numbers of more than 15
	// digits), also listed on the workbook's Notes sheet.
	Notes []string `json:"notes,omitempty"`
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
func headerLabels(cols []catalog.Column) []string {
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

// columnNotes are the notes on columns, each once, in the order found.
type columnNotes struct {
	seen map[string]bool
	list []string
}

func (n *columnNotes) add(label, note string) {
	s := fmt.Sprintf("Column %q: %s.", label, note)
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	if !n.seen[s] {
		n.seen[s] = true
		n.list = append(n.list, s)
	}
}

// notesSheet lists the columns written partly as text and the cells cut to
// Excel's cell size.
func notesSheet(res *Result) (Sheet, bool) {
	if len(res.Notes) == 0 && len(res.Truncated) == 0 {
		return Sheet{}, false
	}
	s := Sheet{Name: "Notes"}
	for _, n := range res.Notes {
		s.Rows = append(s.Rows, []string{n})
	}
	if len(res.Truncated) > 0 {
		s.Rows = append(s.Rows, []string{"Cells longer than Excel's 32,767 characters were cut to that length."}, []string{"sheet", "cell", "column", "length"})
		for _, t := range res.Truncated {
			s.Rows = append(s.Rows, []string{t.Sheet, t.Cell, t.Column, strconv.Itoa(t.Length)})
		}
	}
	return s, true
}

// writeSheet adds a sheet of text cells, declaring the range it uses.
func writeSheet(f *excelize.File, s Sheet) error {
	name := sheetName(s.Name)
	if _, err := f.NewSheet(name); err != nil {
		return err
	}
	width := 1
	for _, row := range s.Rows {
		width = max(width, len(row))
	}
	lastCol, err := excelize.ColumnNumberToName(width)
	if err != nil {
		return err
	}
	if err := f.SetSheetDimension(name, fmt.Sprintf("A1:%s%d", lastCol, max(len(s.Rows), 1))); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		return err
	}
	for r, row := range s.Rows {
		vals := make([]any, len(row))
		for i, v := range row {
			vals[i] = v
		}
		ref, _ := excelize.CoordinatesToCellName(1, r+1)
		if err := sw.SetRow(ref, vals); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// sheetName makes a valid sheet name: at most 31 characters, none of
// : \ / ? * [ ], not starting or ending with an apostrophe, not the
// reserved History.
func sheetName(s string) string {
	s = strings.Map(func(r rune) rune {
		if datadesk.UnsafeNameRune(r) {
			return -1
		}
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '_'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 31 {
		s = string(r[:31])
	}
	// Excel refuses a name that starts or ends with an apostrophe.
	s = strings.Trim(s, "'")
	if strings.TrimSpace(s) == "" {
		s = "Data"
	}
	// Excel keeps "History" for its change tracking, in any letter case,
	// and reports a workbook with such a sheet as damaged.
	if strings.EqualFold(s, "History") {
		s += " (data)"
	}
	return s
}

// formulaStarts are the first characters that make a spreadsheet run a cell
// as a formula.
const formulaStarts = "=+-@\t\r"

// Neutralize returns a text cell a spreadsheet will not run as a formula:
// text starting with = + - @ tab or carriage return gets a leading
// apostrophe. Text a spreadsheet reads as a plain number (-5, +3, -1.5e3)
// is not a formula and stays as it is.
func Neutralize(s string) string {
	if s != "" && strings.ContainsRune(formulaStarts, rune(s[0])) && !plainNumber.MatchString(s) {
		return "'" + s
	}
	return s
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
	if src.CSV != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return nil, err
		}
		if ok, err := src.CSV(bw); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return &Result{Rows: src.Count}, bw.Flush()
		}
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
			out[i] = jsonCell(v, src.Columns[i].Type)
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
