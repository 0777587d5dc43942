package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// Rows returns a page of a table. Rows in file order unless sorted; sorted
// pages break ties by file order so paging is stable.
// Errors: not_found, invalid (offset, limit, sort, direction, filters,
// search).
func (s *Store) Rows(ctx context.Context, tableID string, req catalog.PageRequest) (*catalog.Page, error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	p, err := catalog.PagePlanFor(t, req)
	if err != nil {
		return nil, err
	}
	if r, err := s.remoteOf(t); err != nil {
		return nil, err
	} else if r != nil {
		return r.Rows(ctx, p)
	}
	where, params := ducksql.Where(p.Conds, p.Search)
	order, reversed := "rowid", "rowid DESC"
	if p.Sort != nil {
		dir, rev := "ASC", "DESC"
		if p.Desc {
			dir, rev = rev, dir
		}
		order = ducksql.Order(ducksql.Ident(p.Sort.Key), p.Sort.Ordering(), dir) + ", rowid"
		// The reverse of the order, nulls first.
		reversed = strings.ReplaceAll(ducksql.Order(ducksql.Ident(p.Sort.Key), p.Sort.Ordering(), rev), "NULLS LAST", "NULLS FIRST") + ", rowid DESC"
	}
	from := `data.` + ducksql.Ident(t.ID)
	total := t.RowCount
	var q string
	args := params
	flip := false
	switch {
	case !p.Filtered() && p.Sort == nil:
		// A stored table's row ids are its row positions: the last page
		// reads only its own rows, as fast as the first.
		q = `SELECT * FROM ` + from + ` WHERE rowid >= ? AND rowid < ? ORDER BY rowid`
		args = []any{p.Offset, p.Offset + int64(p.Limit)}
	default:
		if where != "" {
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+from+where, params...).Scan(&total); err != nil {
				return nil, classify(ctx, err)
			}
		}
		q = `SELECT * FROM ` + from + where + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
		args = append(append([]any(nil), params...), p.Limit, p.Offset)
		if tail := total - p.Offset; p.Offset > total/2 && tail > 0 {
			// A page in the second half is read from the end in the
			// reverse order, so the last page sorts as few rows as the
			// first; its rows are put back in order below.
			n := min(int64(p.Limit), tail)
			q = `SELECT * FROM ` + from + where + ` ORDER BY ` + reversed + ` LIMIT ? OFFSET ?`
			args = append(append([]any(nil), params...), n, tail-n)
			flip = true
		}
	}
	rows, err := s.pageRows(ctx, t, q, args)
	if err != nil {
		return nil, err
	}
	if flip {
		slices.Reverse(rows)
	}
	return p.Page(rows, total), nil
}

// pageRows runs a page's statement and reads its rows as JSON values.
func (s *Store) pageRows(ctx context.Context, t *catalog.Table, q string, args []any) ([][]any, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(t.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		for i := range vals {
			vals[i] = JSONValue(vals[i], t.Columns[i].Type)
		}
		out = append(out, vals)
	}
	return out, classify(ctx, rows.Err())
}

// JSONValue turns a scanned DuckDB value into what JSON should carry: as
// catalog.JSONValue, with DuckDB's decimals exact, as json.Number.
func JSONValue(v any, typ string) any {
	if d, ok := v.(duckdb.Decimal); ok {
		return json.Number(decimalString(d))
	}
	return catalog.JSONValue(v, typ)
}

func decimalString(d duckdb.Decimal) string {
	s := d.Value.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	scale := int(d.Scale)
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
