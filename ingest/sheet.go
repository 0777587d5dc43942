package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// sheetRows streams the non-empty rows of one sheet in order: the row's
// 1-based number, each cell's text and kind. The slices are reused between
// calls. The spreadsheet readers (XLSX and XLS) both give one.
type sheetRows func(yield func(row int, texts []string, kinds []typing.CellKind) error) error

// errStop ends a stream early once what was wanted is found.
var errStop = errors.New("stop")

// sheetSources makes the tables of a sheet (findTables): one for each
// block of typed data under its header, the rows around them kept out
// and listed in the import report. A person may name the header rows
// instead; and rows to keep out. ok is false for a sheet without any
// value.
func sheetSources(filename, sheet string, rows sheetRows, budget *cellBudget, choice headerChoice) (srcs []engine.TableSource, err error) {
	window, err := readWindow(rows, choice)
	if err != nil {
		return nil, err
	}
	if len(window) == 0 {
		return nil, nil
	}
	tables, err := choose(window, choice, filename, fmt.Sprintf("sheet %q", sheet))
	if err != nil {
		return nil, err
	}
	for i, t := range tables {
		src := tableSource(t, tableName(sheet, i, t), choice)
		src.Sheet = datadesk.CleanName(sheet)
		src.Cells = func(yield func([]string, []typing.CellKind) error) (engine.RowStats, error) {
			return readBlock(filename, sheet, rows, budget, t, choice, yield)
		}
		srcs = append(srcs, src)
	}
	return srcs, nil
}

// readWindow reads the rows with a value that the tables are found in:
// the first windowRows of them (windowCells cells), or, under a header
// asked for, the rows to it and a few under it; rows asked kept out are
// left out.
func readWindow(rows sheetRows, choice headerChoice) ([]probeRow, error) {
	var window []probeRow
	cells, last, under, size := 0, 0, 0, 0
	err := rows(func(row int, texts []string, kinds []typing.CellKind) error {
		if emptyRow(texts) || choice.skip[row] {
			return nil
		}
		window = append(window, probeRow{row: row, gap: row - last - 1, texts: slices.Clone(texts), kinds: slices.Clone(kinds)})
		last, cells = row, cells+len(texts)
		for _, t := range texts {
			size += len(t)
		}
		if l := choice.last(); l > 0 && row > l {
			under++
		}
		switch {
		case len(window) == windowRows, cells >= windowCells, size >= windowBytes && !choice.asked():
		case choice.asked() && under >= 4*profileRows:
		case !choice.find && !choice.asked() && len(window) > profileRows:
		default:
			return nil
		}
		return errStop
	})
	if err != nil && err != errStop {
		return nil, err
	}
	return window, nil
}

// choose finds the tables of a window as the choice says: under the
// header rows asked for, as the file is (literally), or found. Errors:
// invalid, when a header row asked for holds no value.
func choose(window []probeRow, choice headerChoice, filename, where string) ([]layout, error) {
	switch {
	case choice.asked():
		t, missing := askedTable(window, choice.rows)
		if missing > 0 {
			field := "header_rows"
			if len(choice.rows) == 1 {
				field = "header_row"
			}
			return nil, datadesk.Errorf(datadesk.Invalid, "%s: %s has no value in row %d, a header row asked for", filename, where, missing).WithField(field)
		}
		return []layout{t}, nil
	case !choice.find:
		return []layout{literalTable(window)}, nil
	}
	return findTables(window), nil
}

// tableName names the i-th table of a sheet: the sheet's name for the
// first; the sheet's and the title above it, else its rows, for the
// others ("Database · Data").
func tableName(sheet string, i int, t layout) string {
	if i == 0 {
		return sheet
	}
	if n := len(t.above); n > 0 && t.above[n-1].width() == 1 {
		if title := strings.TrimSpace(t.above[n-1].texts[t.above[n-1].only()]); utf8.RuneCountInString(title) <= 60 {
			return sheet + " · " + title
		}
	}
	if t.end > 0 {
		return fmt.Sprintf("%s · rows %d-%d", sheet, t.start, t.end)
	}
	return fmt.Sprintf("%s · from row %d", sheet, t.start)
}

// tableSource is a table's source but for its rows: its name, header
// and what was kept out above it.
func tableSource(t layout, name string, choice headerChoice) engine.TableSource {
	hdr := headerOf(t.header, t.units)
	src := engine.TableSource{Name: name, Header: hdr.labels, Keys: hdr.keys, Units: hdr.units, HeaderAsked: choice.asked(), ReadAs: choice.said}
	if t.sections {
		src.Header = append([]string{"Section"}, src.Header...)
		if src.Keys != nil {
			src.Keys = append([]string{"section"}, src.Keys...)
		}
		if src.Units != nil {
			src.Units = append([]string{""}, src.Units...)
		}
	}
	if len(hdr.rows) > 0 {
		src.HeaderRow, src.HeaderRows = hdr.rows[len(hdr.rows)-1], hdr.rows
	}
	if t.units >= 0 && len(hdr.rows) > 1 {
		// The label row is the last row of labels.
		src.HeaderRow = hdr.rows[len(hdr.rows)-2]
	}
	for _, r := range t.above {
		src.Skipped = append(src.Skipped, skippedRow(r, keptAbove))
	}
	if t.literal {
		if note := t.uncertain; note != "" {
			src.Notes = append(src.Notes, note)
		}
	}
	return src
}

// readBlock streams the rows of table t of a sheet, under its header,
// sorted by a blockReader: the rows of data to yield, the rest kept out
// and listed.
func readBlock(filename, sheet string, rows sheetRows, budget *cellBudget, t layout, choice headerChoice,
	yield func([]string, []typing.CellKind) error) (stats engine.RowStats, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = damagedSheet(filename, sheet, fmt.Errorf("panic: %v", r))
		}
	}()
	first := t.start
	if n := len(t.header); n > 0 {
		first = t.header[n-1].row + 1
	}
	numbers := &engine.RowNumbers{}
	b := newBlockReader(t, choice.skip, false, func(texts []string, kinds []typing.CellKind) error {
		return yield(texts, kinds)
	})
	b.onData = func(row int) { numbers.Add(int64(row)) }
	empties, last := 0, first-1
	err = rows(func(row int, texts []string, kinds []typing.CellKind) error {
		if row < first {
			return nil
		}
		if t.end > 0 && row > t.end {
			return errStop
		}
		if emptyRow(texts) {
			return nil
		}
		empties += max(row-last-1, 0)
		last = row
		if err := budget.take(filename, len(texts)); err != nil {
			return err
		}
		return b.add(probeRow{row: row, texts: texts, kinds: kinds})
	})
	if err != nil && err != errStop {
		return stats, err
	}
	stats.Skipped = b.end()
	stats.Rows = numbers
	if empties > 0 {
		stats.Notes = append(stats.Notes, fmt.Sprintf("%d empty rows skipped", empties))
	}
	hdr := headerOf(t.header, t.units)
	above := make([]catalog.SkippedRow, 0, len(t.above))
	for _, r := range t.above {
		above = append(above, skippedRow(r, keptAbove))
	}
	if note := keptNote(above, stats.Skipped, hdr, t.sections, choice.asked()); note != "" {
		stats.Notes = append(stats.Notes, note)
	}
	return stats, nil
}

// cellBudget bounds the cells read from one upload's sheets together: a
// small workbook can hold many rows that compress to nothing.
type cellBudget struct {
	max  int64
	left atomic.Int64
}

func newCellBudget(max int64) *cellBudget {
	b := &cellBudget{max: max}
	b.left.Store(max)
	return b
}

// take counts n more cells. Errors: too_large past the budget.
func (b *cellBudget) take(filename string, n int) error {
	if b.left.Add(-int64(n)) < 0 {
		return datadesk.Errorf(datadesk.TooLarge, "%s holds more than %d cells; at most %d are read from one upload", filename, b.max, b.max).WithField("file")
	}
	return nil
}

func damagedSheet(filename, sheet string, cause error) error {
	return datadesk.Errorf(datadesk.Invalid, "%s: sheet %q could not be read: the workbook is damaged", filename, sheet).WithField("file").WithCause(cause)
}

func tooWide(filename, sheet string, row, cols int) error {
	return datadesk.Errorf(datadesk.Invalid,
		"%s: sheet %q row %d uses %d columns; at most %d are allowed", filename, sheet, row, cols, engine.MaxColumns).WithField("file")
}

func emptyRow(row []string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// rowBatch is rows handed from a sheet's reader to its consumer.
type rowBatch struct {
	nums  []int
	offs  []int // row i's cells are texts[offs[i]:offs[i+1]]
	texts []string
	kinds []typing.CellKind
}

// batchCells bounds the cells of one batch.
const batchCells = 16 << 10

func (b *rowBatch) reset() {
	b.nums, b.offs, b.texts, b.kinds = b.nums[:0], append(b.offs[:0], 0), b.texts[:0], b.kinds[:0]
}

func (b *rowBatch) add(row int, texts []string, kinds []typing.CellKind) {
	b.nums = append(b.nums, row)
	b.texts = append(b.texts, texts...)
	b.kinds = append(b.kinds, kinds...)
	b.offs = append(b.offs, len(b.texts))
}

// pipelined reads a sheet on a goroutine of its own and hands its rows
// over in batches, so that reading (inflating and parsing) and what is
// done with each row (typing and storing) run on two cores. A panic while
// reading is a damaged sheet; a yield that fails stops the reading.
func pipelined(filename, sheet string, rows sheetRows) sheetRows {
	return func(yield func(int, []string, []typing.CellKind) error) error {
		batches := make(chan *rowBatch, 4)
		free := make(chan *rowBatch, 8)
		stop := make(chan struct{})
		errc := make(chan error, 1)
		take := func() *rowBatch {
			select {
			case b := <-free:
				b.reset()
				return b
			default:
				b := &rowBatch{}
				b.reset()
				return b
			}
		}
		go func() {
			var err error
			defer func() {
				if r := recover(); r != nil {
					err = damagedSheet(filename, sheet, fmt.Errorf("panic: %v", r))
				}
				close(batches)
				errc <- err
			}()
			b := take()
			send := func() bool {
				select {
				case batches <- b:
					b = take()
					return true
				case <-stop:
					return false
				}
			}
			err = rows(func(row int, texts []string, kinds []typing.CellKind) error {
				b.add(row, texts, kinds)
				if len(b.texts) >= batchCells || len(b.nums) >= 1024 {
					if !send() {
						return errStop
					}
				}
				return nil
			})
			if err == nil && len(b.nums) > 0 {
				send()
			}
		}()
		halt := sync.OnceFunc(func() { close(stop) })
		// However the caller ends (a panic too), the reader ends with it.
		defer func() {
			halt()
			for range batches {
			}
		}()
		var yerr error
		for b := range batches {
			for i := 0; yerr == nil && i < len(b.nums); i++ {
				lo, hi := b.offs[i], b.offs[i+1]
				if yerr = yield(b.nums[i], b.texts[lo:hi:hi], b.kinds[lo:hi:hi]); yerr != nil {
					halt()
				}
			}
			select {
			case free <- b:
			default:
			}
		}
		err := <-errc
		if yerr != nil {
			return yerr
		}
		return err
	}
}
