package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// MoveTable moves a table's rows to location to (LocationDuckDB or
// LocationClickHouse) and records the new location in the catalog. The
// rows are copied first and counted on arrival; only then does the catalog
// change and the old copy go, so a failure at any point leaves the table
// whole where it was. Queries, pages and exports follow the catalog.
// Errors: not_found, invalid (to, or no cluster configured), timeout.
func (s *Store) MoveTable(ctx context.Context, id, to string) (*catalog.Table, error) {
	// The table is read under the lock: a move that waited for another
	// sees where that one left it.
	s.movesMu.Lock()
	defer s.movesMu.Unlock()
	t, err := s.Table(ctx, id)
	if err != nil {
		return nil, err
	}
	if to != catalog.LocationDuckDB && to != catalog.LocationClickHouse {
		return nil, datadesk.Errorf(datadesk.Invalid, "unknown location %q", to).WithField("to").WithAllowed(catalog.LocationDuckDB, catalog.LocationClickHouse)
	}
	if t.SourceTableID != "" {
		return nil, datadesk.Errorf(datadesk.Invalid, "table %s is a query's view; move the table it came from", t.ID).WithField("table_id")
	}
	if t.Location == to {
		return t, nil
	}
	if s.remote == nil || (to != catalog.LocationDuckDB && s.remote.Name() != to) || (t.Location != catalog.LocationDuckDB && s.remote.Name() != t.Location) {
		return nil, datadesk.Errorf(datadesk.Invalid, "no %s cluster is configured on this server", catalog.LocationClickHouse).WithField("to")
	}
	if to == catalog.LocationDuckDB {
		err = s.moveIn(ctx, t)
	} else {
		err = s.moveOut(ctx, t)
	}
	if err != nil {
		return nil, err
	}
	moved, err := s.Table(ctx, t.ID)
	if err == nil {
		s.compactLoaded([]catalog.Table{*moved})
	}
	return moved, err
}

// MoveTable moves table id of owner (found among the owners when empty)
// as Store.MoveTable does, while the engine serves: the owner's other
// tables and its calls go on throughout. Errors: not_found, and
// Store.MoveTable's.
func (e *Engine) MoveTable(ctx context.Context, owner, id, to string) (string, *catalog.Table, error) {
	owners := []string{owner}
	if owner == "" {
		var err error
		if owners, err = e.Owners(); err != nil {
			return "", nil, err
		}
	}
	for _, o := range owners {
		s, release, err := e.Acquire(ctx, o)
		if err != nil {
			return "", nil, err
		}
		if _, err := s.Table(ctx, id); datadesk.IsNotFound(err) {
			release()
			continue
		}
		t, err := s.MoveTable(ctx, id, to)
		release()
		return o, t, err
	}
	return "", nil, datadesk.Errorf(datadesk.NotFound, "no table %q", id).WithField("table_id")
}

// moveOut copies a DuckDB table to the remote backend, then points the
// catalog there in one transaction. Until then the table answers from
// DuckDB; the DuckDB copy stays a while for readers that found it before
// the switch (retired), and the journal lets a killed move's copy on the
// backend be dropped at the next start or move.
func (s *Store) moveOut(ctx context.Context, t *catalog.Table) error {
	types, err := s.SQLTypes(ctx, t)
	if err != nil {
		return err
	}
	if err := s.journal(ctx, t.ID, s.remote.Name(), moveCopy); err != nil {
		return err
	}
	// The catalog says DuckDB: whatever the backend holds under this id is
	// what an earlier move left.
	if err := s.remote.Drop(ctx, t); err != nil {
		return err
	}
	if s.testHookMoveOut != nil {
		s.testHookMoveOut()
	}
	if err := s.putText(ctx, s.db, t, types, `data.`+ducksql.Ident(t.ID)+` ORDER BY rowid`); err != nil {
		return err
	}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, `UPDATE dd_tables SET location = ? WHERE id = ?`, s.remote.Name(), t.ID); err != nil {
			return classify(ctx, err)
		}
		return switchJournal(ctx, conn, t.ID, catalog.LocationDuckDB)
	})
	if err != nil {
		_ = s.remote.Drop(context.WithoutCancel(ctx), t)
		return err
	}
	s.forgetTables()
	s.sweepLater()
	return nil
}

// Kinds of dd_moves rows.
const (
	moveCopy    = "copy"
	moveRetired = "retired"
)

// journal records a copy of table id being made at location.
func (s *Store) journal(ctx context.Context, id, location, kind string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO dd_moves VALUES (?, ?, ?, ?)`, id, location, kind, time.Now().UTC())
	return classify(ctx, err)
}

// switchJournal ends a move of table id, in the transaction that switches
// the catalog: the new copy is the table, the old one at from is retired.
func switchJournal(ctx context.Context, conn *sql.Conn, id, from string) error {
	if _, err := conn.ExecContext(ctx, `DELETE FROM dd_moves WHERE table_id = ?`, id); err != nil {
		return classify(ctx, err)
	}
	_, err := conn.ExecContext(ctx, `INSERT INTO dd_moves VALUES (?, ?, ?, ?)`, id, from, moveRetired, time.Now().UTC())
	return classify(ctx, err)
}

// sweepMoves drops the copies the journal lists that are not their table's
// place: retired copies from before olderThan, and, with copies (at the
// first open since the start, when no move can be running), the copies of
// moves that were killed.
func (s *Store) sweepMoves(ctx context.Context, olderThan time.Time, copies bool) error {
	s.movesMu.Lock()
	defer s.movesMu.Unlock()
	type entry struct {
		id, location, kind string
		since              time.Time
		current            sql.NullString
	}
	var entries []entry
	rows, err := s.db.QueryContext(ctx, `SELECT m.table_id, m.location, m.kind, m.since, t.location
		FROM dd_moves m LEFT JOIN dd_tables t ON t.id = m.table_id`)
	if err != nil {
		return classify(ctx, err)
	}
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.id, &e.location, &e.kind, &e.since, &e.current); err != nil {
			rows.Close()
			return classify(ctx, err)
		}
		entries = append(entries, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return classify(ctx, err)
	}
	for _, e := range entries {
		place := e.current.String
		if !e.current.Valid || place == "" {
			place = "" // the table was deleted: every copy goes
		}
		switch {
		case e.kind == moveCopy && !copies:
			continue
		case e.kind == moveRetired && e.since.After(olderThan) && place != "":
			continue
		case place != e.location:
			if err := s.dropCopy(ctx, e.id, e.location); err != nil {
				s.logger.Error("drop a moved table's old copy", "table", e.id, "location", e.location, "err", err)
				continue
			}
		}
		if _, err := s.db.ExecContext(ctx, `DELETE FROM dd_moves WHERE table_id = ? AND location = ? AND kind = ?`, e.id, e.location, e.kind); err != nil {
			return classify(ctx, err)
		}
	}
	return nil
}

// dropCopy drops table id's copy at location.
func (s *Store) dropCopy(ctx context.Context, id, location string) error {
	if location == catalog.LocationDuckDB {
		// Under the write lock: a delete of the file drops the same table
		// in its own transaction, and two drops of one table at once fail
		// one of them as a write-write conflict.
		return s.inTx(ctx, func(conn *sql.Conn) error {
			_, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS data.`+ducksql.Ident(id))
			return classify(ctx, err)
		})
	}
	if s.remote == nil || s.remote.Name() != location {
		return fmt.Errorf("engine: no %s backend to drop %s from", location, id)
	}
	return s.remote.Drop(ctx, &catalog.Table{ID: id, Location: location})
}

func (s *Store) checkCount(ctx context.Context, t *catalog.Table) error {
	n, err := s.remote.Count(ctx, t)
	if err != nil {
		_ = s.remote.Drop(context.WithoutCancel(ctx), t)
		return err
	}
	if n != t.RowCount {
		_ = s.remote.Drop(context.WithoutCancel(ctx), t)
		return fmt.Errorf("engine: move of %s: %d rows arrived, want %d", t.ID, n, t.RowCount)
	}
	return nil
}

// SQLTypes returns the DuckDB types of a table's columns in catalog order.
func (s *Store) SQLTypes(ctx context.Context, t *catalog.Table) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_catalog = current_database() AND table_schema = 'data' AND table_name = ?`, t.ID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	byName := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, classify(ctx, err)
		}
		byName[strings.ToLower(name)] = typ
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, err)
	}
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		typ, ok := byName[strings.ToLower(c.Key)]
		if !ok {
			return nil, fmt.Errorf("engine: table %s has no column %q", t.ID, c.Key)
		}
		out[i] = typ
	}
	return out, nil
}

// moveIn copies a remote table back into the owner's DuckDB file through a
// staging table of text, in row order, casting each column to its type;
// the catalog changes in the same transaction, and the remote copy is
// retired, to go a little later.
func (s *Store) moveIn(ctx context.Context, t *catalog.Table) error {
	types, err := s.remote.SQLTypes(ctx, t)
	if err != nil {
		return err
	}
	// The copy is made outside the owner's write lock, so uploads and
	// other changes go on while the rows arrive; only the switch holds it,
	// a moment. A copy left by a crash is an orphan the next open drops.
	incoming := t.ID + "__in"
	if err := s.copyIn(ctx, t, types, incoming); err != nil {
		_, _ = s.db.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS data.`+ducksql.Ident(incoming))
		return err
	}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		// The catalog says the backend: a DuckDB table of this id is an
		// earlier move's old copy.
		for _, q := range []string{`DROP TABLE IF EXISTS data.` + ducksql.Ident(t.ID), `ALTER TABLE data.` + ducksql.Ident(incoming) + ` RENAME TO ` + ducksql.Ident(t.ID)} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return classify(ctx, err)
			}
		}
		if _, err = conn.ExecContext(ctx, `UPDATE dd_tables SET location = ? WHERE id = ?`, catalog.LocationDuckDB, t.ID); err != nil {
			return classify(ctx, err)
		}
		return switchJournal(ctx, conn, t.ID, t.Location)
	})
	if err != nil {
		_, _ = s.db.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS data.`+ducksql.Ident(incoming))
		return err
	}
	// Readers find the table in DuckDB from now on; the cluster's copy
	// goes once those that found it there are done.
	s.forgetTables()
	s.sweepLater()
	return nil
}

// copyIn copies remote table t into the owner's DuckDB file as table name,
// through a staging table of text on one connection, in row order,
// casting each column to its type, and counts the rows that arrived.
func (s *Store) copyIn(ctx context.Context, t *catalog.Table, types []string, name string) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return classify(ctx, err)
	}
	defer conn.Close()
	const stage = "dd_stage_move"
	var cols, sel []string
	for i, c := range t.Columns {
		cols = append(cols, ducksql.StageColumn(i+1)+" VARCHAR")
		sel = append(sel, `CAST(`+ducksql.StageColumn(i+1)+` AS `+types[i]+`) AS `+ducksql.Ident(c.Key))
	}
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+stage+` (`+strings.Join(cols, ", ")+`)`); err != nil {
		return classify(ctx, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+stage)
	err = conn.Raw(func(dc any) error {
		ap, err := duckdb.NewAppender(dc.(driver.Conn), "temp", "main", stage)
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(t.Columns))
		err = s.remote.Scan(ctx, t, func(row []any) error {
			for i, v := range row {
				vals[i] = duckText(v, t.Columns[i].Type)
			}
			return ap.AppendRow(vals...)
		})
		if cerr := ap.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return classify(ctx, err)
	}
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TABLE data.`+ducksql.Ident(name)+` AS SELECT `+strings.Join(sel, ", ")+` FROM `+stage); err != nil {
		return classify(ctx, err)
	}
	var n int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM data.`+ducksql.Ident(name)).Scan(&n); err != nil {
		return classify(ctx, err)
	}
	if n != t.RowCount {
		return fmt.Errorf("engine: move of %s: %d rows arrived, want %d", t.ID, n, t.RowCount)
	}
	return nil
}

// duckText writes a scanned value as text DuckDB casts back to the same
// value.
func duckText(v any, typ string) driver.Value {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	if typ == typing.TypeDate || typ == typing.TypeTimestamp || typ == typing.TypeTime {
		return fmt.Sprint(JSONValue(v, typ))
	}
	return fmt.Sprint(v)
}

// placeLarge moves the new tables of f that have at least remoteMinRows
// rows to the remote backend. A failed move leaves the table in DuckDB,
// whole, and is logged: the upload has succeeded either way.
func (s *Store) placeLarge(ctx context.Context, f *catalog.File) {
	if s.remote == nil || s.remoteMinRows <= 0 {
		return
	}
	for i, t := range f.Tables {
		if t.RowCount < s.remoteMinRows {
			continue
		}
		moved, err := s.MoveTable(ctx, t.ID, s.remote.Name())
		if err != nil {
			s.logger.Error("move a large table to the cluster", "table", t.ID, "rows", t.RowCount, "err", err)
			continue
		}
		f.Tables[i] = *moved
	}
}

// remoteTables returns the tables among ids whose rows are on the remote
// backend.
func (s *Store) remoteTables(ctx context.Context, ids []string) []*catalog.Table {
	var out []*catalog.Table
	for _, id := range ids {
		if t, err := s.Table(ctx, id); err == nil && t.Location != catalog.LocationDuckDB && s.remote != nil {
			out = append(out, t)
		}
	}
	return out
}

// dropRemote removes deleted tables' rows from the remote backend; a
// failure leaves unreachable rows there and is logged.
func (s *Store) dropRemote(ctx context.Context, tables []*catalog.Table) {
	for _, t := range tables {
		if err := s.remote.Drop(ctx, t); err != nil {
			s.logger.Error("drop a deleted table on the cluster", "table", t.ID, "err", err)
		}
	}
}

// showOn stores a derived result of a table held by r as a new table on r,
// next to its source, and records it in the owner's catalog.
func (s *Store) showOn(ctx context.Context, r catalog.Backend, p *catalog.Plan, t *catalog.Table) (*catalog.View, error) {
	n, err := r.Derive(ctx, p, t)
	if err != nil {
		return nil, err
	}
	t.RowCount = n
	t.Report = catalog.Report{Table: t.Name, RowsRead: n, RowsStored: n, Notes: []string{"derived by a query of table " + p.Table.ID}}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		if err := writeCatalog(ctx, conn, t, "view"); err != nil {
			return err
		}
		_, err := conn.ExecContext(ctx, `UPDATE dd_tables SET location = ? WHERE id = ?`, r.Name(), t.ID)
		return classify(ctx, err)
	})
	if err != nil {
		_ = r.Drop(context.WithoutCancel(ctx), t)
		return nil, err
	}
	return &catalog.View{TableID: t.ID, FileID: t.FileID, Derived: true, RowCount: n}, nil
}

// copyOn makes t a copy of src on the backend that holds src, and records
// it in the catalog inside the transaction open on conn. If that
// transaction rolls back later, the copy stays on the backend unreferenced.
func (s *Store) copyOn(ctx context.Context, conn *sql.Conn, r catalog.Backend, src, t *catalog.Table) (*catalog.Table, error) {
	if err := r.Copy(ctx, src, t); err != nil {
		return nil, err
	}
	t.Report = catalog.Report{Table: t.Name, RowsRead: src.RowCount, RowsStored: src.RowCount, Notes: []string{"copied from table " + src.ID}}
	for _, c := range t.Columns {
		t.Report.Columns = append(t.Report.Columns, catalog.ReportOf(c))
	}
	err := writeCatalog(ctx, conn, t, "sheet")
	if err == nil {
		_, err = conn.ExecContext(ctx, `UPDATE dd_tables SET location = ? WHERE id = ?`, r.Name(), t.ID)
		err = classify(ctx, err)
	}
	if err != nil {
		_ = r.Drop(context.WithoutCancel(ctx), t)
		return nil, err
	}
	t.Location = r.Name()
	return t, nil
}

// remoteOf returns the backend holding t's rows, or nil when they are in
// the owner's DuckDB file. A table on a backend this server is not
// configured for is an internal error: the data exists, the server cannot
// reach it.
func (s *Store) remoteOf(t *catalog.Table) (catalog.Backend, error) {
	if t.Location == "" || t.Location == catalog.LocationDuckDB {
		return nil, nil
	}
	if s.remote == nil || s.remote.Name() != t.Location {
		return nil, fmt.Errorf("engine: table %s lives on %s, which is not configured", t.ID, t.Location)
	}
	return s.remote, nil
}
