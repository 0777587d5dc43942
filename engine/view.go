package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// Show makes a query's result displayable. The unfiltered original is shown
// as it is; a derived result becomes a new table of the owner, with the
// source and the query kept as its provenance; a result without rows makes
// nothing and returns nil.
func (s *Store) Show(ctx context.Context, p *catalog.Plan, res *catalog.QueryResult) (*catalog.View, error) {
	if !p.Derived() {
		return &catalog.View{TableID: p.Table.ID, FileID: p.Table.FileID, RowCount: p.Table.RowCount}, nil
	}
	if res.MatchedRowCount == 0 {
		return nil, nil
	}
	var cols []catalog.Column
	if p.Grouped() {
		cols = append(cols, p.Groups...)
		for i, a := range p.Aggs {
			reason := "aggregate: " + a.Op
			if a.Col != nil {
				reason += " of " + a.Col.Key
			}
			cols = append(cols, catalog.Column{Key: a.Name, Label: a.Name, Type: p.OutType(len(p.Groups) + i), Reason: reason})
		}
	} else {
		cols = slices.Clone(p.Cols)
	}
	// Aggregate names are the caller's: they keep their label, and their
	// key never takes a name the engine uses.
	keys := make([]string, len(cols))
	for i, c := range cols {
		keys[i] = c.Key
	}
	keys = typing.UniqueKeys(keys)
	for i := range cols {
		cols[i].Key = keys[i]
	}
	query, err := json.Marshal(p.Query)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if err := s.room(ctx, s.db, false, 0); err != nil {
		return nil, err
	}
	sel, params := ducksql.View(p, keys)
	t := &catalog.Table{ID: datadesk.NewID("t"), FileID: p.Table.FileID, Name: p.Table.Name + " (query)", Columns: cols,
		CreatedAt: time.Now().UTC(), SourceTableID: p.Table.ID, Query: string(query)}
	if r, err := s.remoteOf(p.Table); err != nil {
		return nil, err
	} else if r != nil {
		return s.showOn(ctx, r, p, t)
	}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, `CREATE TABLE data.`+ducksql.Ident(t.ID)+` AS `+sel, params...); err != nil {
			return classify(ctx, err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM data.`+ducksql.Ident(t.ID)).Scan(&t.RowCount); err != nil {
			return classify(ctx, err)
		}
		t.Report = catalog.Report{Table: t.Name, RowsRead: t.RowCount, RowsStored: t.RowCount, Notes: []string{"derived by a query of table " + p.Table.ID}}
		return writeCatalog(ctx, conn, t, "view")
	})
	if err != nil {
		return nil, err
	}
	return &catalog.View{TableID: t.ID, FileID: t.FileID, Derived: true, RowCount: t.RowCount}, nil
}
