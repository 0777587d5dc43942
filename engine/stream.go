package engine

import (
	"context"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// Stream sends every row a row plan matches to fn, in the plan's order and
// with its columns, ignoring its offset and limit: the rows of an export of
// what a page shows. Values are as Scan gives them. Run the plan with
// limit 0 first to learn how many rows will come.
// Errors: invalid (a grouped plan), timeout, and whatever fn returns.
func (s *Store) Stream(ctx context.Context, p *catalog.Plan, fn func(row []any) error) error {
	if p.Grouped() {
		return datadesk.Errorf(datadesk.Invalid, "a grouped query has no rows to stream").WithField("group_by")
	}
	if r, err := s.remoteOf(p.Table); err != nil {
		return err
	} else if r != nil {
		return r.Stream(ctx, p, fn)
	}
	q, params := ducksql.Stream(p)
	rows, err := s.db.QueryContext(ctx, q, params...)
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	vals := make([]any, len(p.Cols))
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
