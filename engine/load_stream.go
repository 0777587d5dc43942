package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// streamRows loads any source: its rows stream through Go into a spool
// file (spool.go), each column's values counted in Go as they pass, and
// the typed table is made from the spool (createTyped). It is the way
// of every format DuckDB does not read itself, of tables wider than its
// readers take, and of files its readers handed rows back from.
type streamRows struct{}

func (streamRows) load(ctx context.Context, s *Store, conn *sql.Conn, job loadJob) (*catalog.Table, loadWay, error) {
	st, err := s.spoolRows(ctx, job.src)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.createTyped(ctx, conn, job, st)
	return t, nil, err
}

// spoolRows writes the source's rows to a spool, counting each column's
// value shapes in Go as the rows stream in. A row's values are what a
// staging table of VARCHAR columns would hold: an empty cell, or an empty
// text where the source tells them apart (null), is NULL.
func (s *Store) spoolRows(ctx context.Context, src TableSource) (st tallied, err error) {
	if len(src.Header) > s.maxWidth {
		return tallied{}, tooWide(src, "the header has", len(src.Header), s.maxWidth)
	}
	sp, err := newSpool(s.IncomingDir())
	if err != nil {
		return tallied{}, err
	}
	defer func() {
		if err != nil {
			sp.Close()
		}
	}()
	var (
		rows  int64
		width = min(len(src.Header), s.maxWidth)
		cols  = make([]typing.Stats, s.maxWidth)
		kinds []typing.KindCounts
		vals  = make([]driver.Value, 0, width)
	)
	if src.Cells != nil {
		kinds = make([]typing.KindCounts, s.maxWidth)
	}
	appendRow := func(row []string, null []bool) error {
		if len(row) > s.maxWidth {
			return tooWide(src, fmt.Sprintf("row %d has", rows+1), len(row), s.maxWidth)
		}
		width = max(width, len(row))
		vals = vals[:0]
		for i, cell := range row {
			if err := checkCell(src, rows+1, i+1, cell); err != nil {
				return err
			}
			switch {
			case null != nil && null[i]:
				vals = append(vals, nil)
			case cell != "" || null != nil:
				cols[i].Add(cell)
				vals = append(vals, cell)
			default:
				vals = append(vals, nil)
			}
		}
		rows++
		if rows%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return sp.add(vals)
	}
	var stats RowStats
	if src.Cells != nil {
		stats, err = src.Cells(func(row []string, k []typing.CellKind) error {
			for i := 0; i < len(row) && i < len(k) && i < s.maxWidth; i++ {
				kinds[i].Add(k[i], row[i])
			}
			return appendRow(row, nil)
		})
	} else {
		stats, err = src.rows(appendRow)
	}
	if err != nil {
		return tallied{}, classify(ctx, err)
	}
	return tallied{rows: rows, width: width, stats: stats, cols: cols, kinds: kinds, spool: sp}, nil
}
