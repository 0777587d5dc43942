package engine

import (
	"context"
	"time"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// Scan streams every row of a table in file order to fn, as Go values:
// string, int64, float64, Decimal (as json.Number through JSONValue's
// rules kept raw here), bool, time.Time for dates and timestamps, or nil.
// Errors: not_found, timeout, and whatever fn returns.
func (s *Store) Scan(ctx context.Context, tableID string, fn func(row []any) error) (*catalog.Table, error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	if r, err := s.remoteOf(t); err != nil {
		return nil, err
	} else if r != nil {
		return t, r.Scan(ctx, t, fn)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM data.`+ducksql.Ident(t.ID)+` ORDER BY rowid`)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	vals := make([]any, len(t.Columns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		for i, v := range vals {
			vals[i] = scanValue(v)
		}
		if err := fn(vals); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, err)
	}
	return t, nil
}

// scanValue normalises driver values: decimals and huge integers become
// exact JSON numbers, dates stay time.Time.
func scanValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x
	case nil, string, int64, float64, bool:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case float32:
		return float64(x)
	}
	return JSONValue(v, "")
}
