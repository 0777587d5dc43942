package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/typing"
)

// sheetRows streams the non-empty rows of one sheet in order: the row's
// 1-based number, each cell's text and kind. The slices are reused between
// calls. The spreadsheet readers (XLSX and XLS) both give one.
type sheetRows func(yield func(row int, texts []string, kinds []typing.CellKind) error) error

// errStop ends a stream early once what was wanted is found.
var errStop = errors.New("stop")

// sheetSource makes a table of a sheet: its header is the first row with a
// value, or a later one below titles and notes (findHeader), and the rows
// under it are the data, but for notes at its end (noteRow). Every row
// kept out is listed in the import report. ok is false for a sheet
// without any value.
func sheetSource(filename, sheet string, rows sheetRows, budget *cellBudget, choice headerChoice) (src engine.TableSource, ok bool, err error) {
	var probe []probeRow
	err = rows(func(row int, texts []string, kinds []typing.CellKind) error {
		if emptyRow(texts) || choice.row > 0 && row > choice.row {
			return nil
		}
		probe = append(probe, probeRow{row: row, texts: slices.Clone(texts), kinds: slices.Clone(kinds)})
		switch {
		case choice.row > 0:
			if row == choice.row {
				return errStop
			}
		case len(probe) == probeRows || !choice.find:
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return src, false, err
	}
	if len(probe) == 0 {
		return src, false, nil
	}
	h, uncertain := 0, ""
	switch {
	case choice.row > 0:
		if h = len(probe) - 1; probe[h].row != choice.row {
			return src, false, datadesk.Errorf(datadesk.Invalid, "%s: sheet %q has no value in row %d, the header row asked for", filename, sheet, choice.row).WithField("header_row")
		}
	case choice.find:
		if h = findHeader(probe); h == 0 {
			uncertain = uncertainNote(probe)
		}
	}
	header, headerRow, width := probe[h].texts, probe[h].row, probe[h].width()
	if choice.row == 0 && !choice.find {
		// No row is ever a note.
		width = 0
	}
	src = engine.TableSource{Name: sheet, Header: header, HeaderRow: headerRow, HeaderAsked: choice.row > 0}
	if uncertain != "" {
		src.Notes = append(src.Notes, uncertain)
	}
	for _, r := range probe[:h] {
		src.Skipped = append(src.Skipped, skippedRow(r, "above"))
	}
	src.Cells = func(yield func([]string, []typing.CellKind) error) (stats engine.RowStats, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = damagedSheet(filename, sheet, fmt.Errorf("panic: %v", r))
			}
		}()
		// Rows that may be notes wait until a row of data follows them,
		// or the sheet ends.
		foot := newFooter(width)
		pass := func(r probeRow) error { return yield(r.texts, r.kinds) }
		skipped, last := 0, headerRow
		err = rows(func(row int, texts []string, kinds []typing.CellKind) error {
			if row <= headerRow || emptyRow(texts) {
				return nil
			}
			skipped += max(row-last-1, 0)
			last = row
			if err := budget.take(filename, len(texts)); err != nil {
				return err
			}
			return foot.add(probeRow{row: row, texts: texts, kinds: kinds}, pass)
		})
		if err != nil {
			return stats, err
		}
		if stats.Skipped, err = foot.end(pass); err != nil {
			return stats, err
		}
		if skipped > 0 {
			stats.Notes = append(stats.Notes, fmt.Sprintf("%d empty rows skipped", skipped))
		}
		if len(src.Skipped) > 0 || len(stats.Skipped) > 0 {
			stats.Notes = append(stats.Notes, skippedNote(src.Skipped, stats.Skipped, headerRow))
		}
		return stats, nil
	}
	return src, true, nil
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
