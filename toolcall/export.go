package toolcall

import (
	"context"

	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
)

// ExportSource is a whole stored table to export, its rows counted first
// (a workbook declares its sheets' ranges before the rows) by the same plan
// as files.query_table.
func ExportSource(ctx context.Context, store *engine.Store, t *catalog.Table) (exports.Source, error) {
	p, err := store.Plan(ctx, catalog.Query{FileID: t.ID})
	if err != nil {
		return exports.Source{}, err
	}
	res, err := store.Run(ctx, p)
	if err != nil {
		return exports.Source{}, err
	}
	return exports.Source{Columns: t.Columns, Count: res.MatchedRowCount, Rows: func(yield func([]any) error) error {
		_, err := store.Scan(ctx, t.ID, yield)
		return err
	}}, nil
}
