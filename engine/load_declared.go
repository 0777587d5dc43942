package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"unicode/utf8"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// appendDeclared loads a source whose columns' counts, and so types, are
// declared beforehand: its rows go straight from the source to DuckDB's
// query appender (appendTyped), with nothing staged or written first.
type appendDeclared struct{}

func (appendDeclared) load(ctx context.Context, s *Store, conn *sql.Conn, job loadJob) (*catalog.Table, loadWay, error) {
	t, err := s.loadCounted(ctx, conn, job.f, job.ordinal, job.src)
	return t, nil, err
}

// loadCounted loads a source whose columns' counts, and so types, are
// known beforehand: its rows go straight from the source to DuckDB's query
// appender (appendTyped), with nothing staged or written first.
func (s *Store) loadCounted(ctx context.Context, conn *sql.Conn, f *catalog.File, ordinal int, src TableSource) (*catalog.Table, error) {
	width := len(src.Header)
	if err := s.checkWidth(src, width); err != nil {
		return nil, err
	}
	labels, keys := columnNames(src, width)
	cols := make([]typing.Stats, width)
	for i := range cols {
		if i < len(src.Counted) {
			cols[i] = src.Counted[i]
		}
	}
	decisions := decideColumns(src, keys, cols, nil)
	t := newTable(f, ordinal, src, 0)
	setColumns(t, labels, keys, decisions)
	sel := make([]string, len(decisions))
	whole := make([]bool, len(decisions))
	for i, d := range decisions {
		sel[i] = cleanColumn(d, i, keys[i])
		if src.Typed != nil && d.Type == typing.TypeInteger && d.Written == nil {
			whole[i] = true
			sel[i] = ducksql.StageColumn(i+1) + " AS " + ducksql.Ident(keys[i])
		}
	}
	var (
		rows  int64
		stats RowStats
	)
	err := s.appendTyped(ctx, conn, t, columnDefs(keys, decisions), strings.Join(sel, ", "), width, whole, func(yield func([]driver.Value) error) error {
		vals := make([]driver.Value, width)
		var err error
		stats, err = src.typedRows(func(row []string, typed []any, null []bool) error {
			if len(row) != width {
				return fmt.Errorf("engine: %s: a counted source yielded a row of %d columns, its header has %d", sourceName(src), len(row), width)
			}
			rows++
			for i, cell := range row {
				switch {
				case emptyCell(i, cell, typed, null):
					vals[i] = nil
				case whole[i]:
					n, err := wholeValue(typed[i], cell)
					if err != nil {
						return fmt.Errorf("engine: %s: row %d, column %d: %w", sourceName(src), rows, i+1, err)
					}
					vals[i] = n
				default:
					if err := checkCell(src, rows, i+1, cell); err != nil {
						return err
					}
					vals[i] = ducksql.CleanValue(decisions[i], cell)
				}
			}
			return yield(vals)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	t.RowCount = rows
	if err := s.record(ctx, conn, t, src, stats, nil); err != nil {
		return nil, err
	}
	return t, nil
}

// checkCell refuses a cell longer than a cell may be, naming its row and
// column (from 1). Errors: invalid.
func checkCell(src TableSource, row int64, col int, cell string) error {
	if len(cell) > MaxCellChars && utf8.RuneCountInString(cell) > MaxCellChars {
		return datadesk.Errorf(datadesk.Invalid, "%s: row %d, column %d has a cell of %d characters; a cell holds at most %d",
			sourceName(src), row, col, utf8.RuneCountInString(cell), MaxCellChars).WithField("file")
	}
	return nil
}
