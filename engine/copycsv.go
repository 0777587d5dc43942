package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"datadesk"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// formulaSafeNumber is the exports' plain number: text starting with = +
// - @ tab or carriage return runs as a formula in a spreadsheet unless it
// is one (exports.Neutralize).
const formulaSafeNumber = `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`

// CopyCSV writes the rows of a table in the owner's DuckDB file to w as
// CSV without a header, in file order, by DuckDB's own writer, with every
// value in the form the exports write it (text neutralised against
// formulas, timestamps as 2006-01-02T15:04:05.999999). ok is false, and
// nothing is written, for a table on a remote backend or with a column
// whose text DuckDB writes in another form (doubles: 1e+21 where the
// exports write every digit). Errors: not_found, timeout.
func (s *Store) CopyCSV(ctx context.Context, tableID string, w io.Writer) (ok bool, err error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return false, err
	}
	if r, err := s.remoteOf(t); err != nil || r != nil {
		return false, err
	}
	sel := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		col := ducksql.Ident(c.Key)
		switch c.Type {
		case typing.TypeDouble:
			return false, nil
		case typing.TypeText:
			sel[i] = `CASE WHEN contains('=+-@' || chr(9) || chr(13), left(` + col + `, 1)) AND ` + col + ` <> '' AND NOT regexp_full_match(` + col +
				`, '` + formulaSafeNumber + `') THEN '''' || ` + col + ` ELSE ` + col + ` END`
		case typing.TypeTimestamp:
			sel[i] = `replace(CAST(` + col + ` AS VARCHAR), ' ', 'T')`
		default:
			sel[i] = col
		}
		sel[i] += ` AS "c` + fmt.Sprint(i) + `"`
	}
	// DuckDB writes only under the owners' directory: the file is made in
	// the owner's incoming folder, sent, and removed.
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("csv")+".csv")
	defer os.Remove(path)
	q := `COPY (SELECT ` + strings.Join(sel, ", ") + ` FROM data.` + ducksql.Ident(t.ID) + `) TO ` + ducksql.Literal(path) +
		` (FORMAT csv, HEADER false, DELIMITER ',', QUOTE '"', ESCAPE '"', NULLSTR '')`
	if _, err := s.db.ExecContext(ctx, q); err != nil {
		return false, classify(ctx, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("engine: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return true, fmt.Errorf("engine: %w", err)
	}
	return true, nil
}
