package engine

import (
	"context"

	"datadesk/engine/ducksql"
)

// What benchmarks measure a store's paths against: the statements the
// engine built, run on the store's own database.

// Drain runs a query the engine built (a plan's SQL) on the store's own
// database and reads every row, for measuring a path against its SQL run
// directly.
func (s *Store) Drain(ctx context.Context, query string, args ...any) (int, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, classify(ctx, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// CopyAsWritten copies table id with CREATE TABLE AS, the layout DuckDB
// gives a table written in one go, for measuring a stored table's scans
// against it; drop removes the copy.
func (s *Store) CopyAsWritten(ctx context.Context, id string) (copyID string, drop func() error, err error) {
	copyID = id + "__as_written"
	if _, err := s.db.ExecContext(ctx, `CREATE OR REPLACE TABLE data.`+ducksql.Ident(copyID)+` AS SELECT * FROM data.`+ducksql.Ident(id)); err != nil {
		return "", nil, classify(ctx, err)
	}
	return copyID, func() error {
		_, err := s.db.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS data.`+ducksql.Ident(copyID))
		return err
	}, nil
}
