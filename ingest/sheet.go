package ingest

import (
	"errors"
	"fmt"
	"strings"
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
// value, the rows under it are the data. ok is false for a sheet without
// any value.
func sheetSource(filename, sheet string, rows sheetRows, budget *cellBudget) (src engine.TableSource, ok bool, err error) {
	var header []string
	headerRow := 0
	err = rows(func(row int, texts []string, kinds []typing.CellKind) error {
		if emptyRow(texts) {
			return nil
		}
		header, headerRow = append([]string(nil), texts...), row
		return errStop
	})
	if err != nil && err != errStop {
		return src, false, err
	}
	if header == nil {
		return src, false, nil
	}
	src = engine.TableSource{Name: sheet, Header: header}
	src.Cells = func(yield func([]string, []typing.CellKind) error) (stats engine.RowStats, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = damagedSheet(filename, sheet, fmt.Errorf("panic: %v", r))
			}
		}()
		skipped, last := 0, headerRow
		err = rows(func(row int, texts []string, kinds []typing.CellKind) error {
			if row <= headerRow {
				return nil
			}
			if emptyRow(texts) {
				return nil
			}
			skipped += max(row-last-1, 0)
			last = row
			if err := budget.take(filename, len(texts)); err != nil {
				return err
			}
			return yield(texts, kinds)
		})
		if skipped > 0 {
			stats.Notes = append(stats.Notes, fmt.Sprintf("%d empty rows skipped", skipped))
		}
		return stats, err
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
