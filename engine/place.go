package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// storeTyped creates the typed table t of columns keys, typed as
// decided, from the staging table, inside the transaction open on conn,
// and drops the staging table; spooled rows go in through the query
// appender, each value cleaned in Go (ducksql.CleanValue) and only cast
// in SQL. A table of at least remoteMinRows rows, when a remote
// backend is configured, streams straight to the backend with the same
// typed values, the staged rows cast once, in file order, and no DuckDB
// copy made first; the rows are counted on arrival. It returns the
// backend that holds the rows, nil for the owner's DuckDB file. A failure
// leaves nothing on the backend.
func (s *Store) storeTyped(ctx context.Context, conn *sql.Conn, t *catalog.Table, stage string, keys []string, decisions []typing.Decision, st tallied) (catalog.Backend, error) {
	remote := s.remote != nil && s.remoteMinRows > 0 && t.RowCount >= s.remoteMinRows
	if st.spool != nil {
		if !remote {
			clean := make([]string, len(decisions))
			for i, d := range decisions {
				clean[i] = cleanColumn(d, i, keys[i])
			}
			return nil, s.appendTyped(ctx, conn, t, columnDefs(keys, decisions), strings.Join(clean, ", "), st.width, nil, func(yield func([]driver.Value) error) error {
				return st.spool.each(st.width, func(vals []driver.Value) error {
					for i, v := range vals {
						if v, ok := v.(string); ok && i < len(decisions) {
							vals[i] = ducksql.CleanValue(decisions[i], v)
						}
					}
					return yield(vals)
				})
			})
		}
		if err := s.unspool(ctx, conn, stage, st); err != nil {
			return nil, err
		}
	}
	sel := make([]string, len(decisions))
	for i, d := range decisions {
		sel[i] = ducksql.StageCast(d, i+1) + " AS " + ducksql.Ident(keys[i])
	}
	typed := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + ducksql.Ident(stage)
	var r catalog.Backend
	if remote {
		r = s.remote
		if err := s.putTyped(ctx, conn, t, typed); err != nil {
			return nil, err
		}
	} else if _, err := conn.ExecContext(ctx, `CREATE TABLE data.`+ducksql.Ident(t.ID)+` AS `+typed); err != nil {
		return nil, classify(ctx, err)
	}
	if _, err := conn.ExecContext(ctx, `DROP TABLE `+ducksql.Ident(stage)); err != nil {
		if r != nil {
			_ = r.Drop(context.WithoutCancel(ctx), t)
		}
		return nil, classify(ctx, err)
	}
	return r, nil
}

// putTyped stores the rows of the typed query as table t on the remote
// backend, each value as DuckDB's text of it, as a move does.
func (s *Store) putTyped(ctx context.Context, conn *sql.Conn, t *catalog.Table, typed string) error {
	types, err := describeTypes(ctx, conn, typed)
	if err != nil {
		return err
	}
	return s.putText(ctx, conn, t, types, `(`+typed+`) AS typed`)
}

// querier is a database or one connection of it.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// putText stores on the remote backend, as table t of the given types,
// the rows read through q from source (what follows FROM: a table and its
// order, or a query), each value as DuckDB's text of it, and checks the
// count stored; on a failure what was stored is dropped.
func (s *Store) putText(ctx context.Context, q querier, t *catalog.Table, types []string, source string) error {
	text := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		text[i] = `CAST(` + ducksql.Ident(c.Key) + ` AS VARCHAR)`
	}
	err := s.remote.Put(ctx, t, types, func(w catalog.RowWriter) error {
		rows, err := q.QueryContext(ctx, `SELECT `+strings.Join(text, ", ")+` FROM `+source)
		if err != nil {
			return classify(ctx, err)
		}
		defer rows.Close()
		return writeText(ctx, rows, len(t.Columns), w)
	})
	if err != nil {
		_ = s.remote.Drop(context.WithoutCancel(ctx), t)
		return err
	}
	return s.checkCount(ctx, t)
}

// writeText sends rows of width text columns to w, NULL as nil.
func writeText(ctx context.Context, rows *sql.Rows, width int, w catalog.RowWriter) error {
	vals := make([]sql.NullString, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	row := make([]*string, width)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return classify(ctx, err)
		}
		for i := range vals {
			row[i] = nil
			if vals[i].Valid {
				row[i] = &vals[i].String
			}
		}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	return classify(ctx, rows.Err())
}

// describeTypes returns the DuckDB types of a query's columns, as
// information_schema names them (DECIMAL(18,2)).
func describeTypes(ctx context.Context, conn *sql.Conn, query string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `DESCRIBE `+query)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, classify(ctx, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		typ, _ := vals[1].(string)
		out = append(out, typ)
	}
	return out, classify(ctx, rows.Err())
}

// recordLoaded writes the catalog rows of a table just loaded, inside the
// transaction open on conn, with the location of the backend r that holds
// its rows (nil for DuckDB). A failure drops the rows from r.
func (s *Store) recordLoaded(ctx context.Context, conn *sql.Conn, t *catalog.Table, r catalog.Backend) error {
	err := writeCatalog(ctx, conn, t, "sheet")
	if err == nil && r != nil {
		_, err = conn.ExecContext(ctx, `UPDATE dd_tables SET location = ? WHERE id = ?`, r.Name(), t.ID)
		err = classify(ctx, err)
		t.Location = r.Name()
	}
	if err != nil && r != nil {
		_ = r.Drop(context.WithoutCancel(ctx), t)
	}
	return err
}

// dropLoaded removes from the remote backend the rows of tables loaded in
// a transaction that then rolled back: nothing of a failed upload stays
// on the cluster.
func (s *Store) dropLoaded(ctx context.Context, tables []catalog.Table) {
	for i := range tables {
		t := &tables[i]
		if s.remote == nil || t.Location != s.remote.Name() {
			continue
		}
		if err := s.remote.Drop(ctx, t); err != nil {
			s.logger.Error("drop a table of a failed upload on the cluster", "table", t.ID, "err", err)
		}
	}
}
