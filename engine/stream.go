package engine

import (
	"context"
	"strings"

	"datadesk"
)

// MaxSearchChars bounds the text a search looks for.
const MaxSearchChars = 200

// searchSQL is the condition that keeps rows where any text column contains
// s, ignoring case; s is bound once per column. Errors: invalid (search),
// when s is too long or the table has no text column.
func searchSQL(t *Table, s string) (string, []any, error) {
	if len([]rune(s)) > MaxSearchChars {
		return "", nil, datadesk.Errorf(datadesk.Invalid, "search takes at most %d characters", MaxSearchChars).WithField("search")
	}
	var conds []string
	var params []any
	for _, c := range t.Columns {
		if c.Type == TypeText {
			conds = append(conds, "contains(lower("+quoteIdent(c.Key)+"), lower(?))")
			params = append(params, s)
		}
	}
	if len(conds) == 0 {
		return "", nil, datadesk.Errorf(datadesk.Invalid, "the table has no text columns to search; use a filter").WithField("search")
	}
	return "(" + strings.Join(conds, " OR ") + ")", params, nil
}

// Stream sends every row a row plan matches to fn, in the plan's order and
// with its columns, ignoring its offset and limit: the rows of an export of
// what a page shows. Values are as Scan gives them. Run the plan with
// limit 0 first to learn how many rows will come.
// Errors: invalid (a grouped plan), timeout, and whatever fn returns.
func (s *Store) Stream(ctx context.Context, p *Plan, fn func(row []any) error) error {
	if p.grouped {
		return datadesk.Errorf(datadesk.Invalid, "a grouped query has no rows to stream").WithField("group_by")
	}
	if r, err := s.remoteOf(p.Table); err != nil {
		return err
	} else if r != nil {
		return r.Stream(ctx, p, fn)
	}
	cols := make([]string, len(p.rowCols))
	for i, c := range p.rowCols {
		cols[i] = quoteIdent(c.Key)
	}
	q := `SELECT ` + strings.Join(cols, ", ") + ` FROM (` + p.source() + `) AS m ORDER BY ` + strings.Join(p.order, ", ")
	rows, err := s.db.QueryContext(ctx, q, p.params...)
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return classify(ctx, err)
		}
		for i, v := range vals {
			vals[i] = scanValue(v)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return classify(ctx, err)
	}
	return nil
}
