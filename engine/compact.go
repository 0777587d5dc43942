package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// A table is scanned fastest in full row groups: DuckDB evaluates a
// filter once per dictionary entry of a row group, and a table written in
// small ones (as owners' databases were, 16,384 rows each, for what a load
// held) has more entries to evaluate and less compressed columns. Every
// load writes row groups of ownerRowGroup rows, but DuckDB's parallel read
// of a CSV file ends each thread's share of the rows in a part-filled
// group (a 1,000,000-row file in 11 groups where a copy has 9), and tables
// written before were in small ones. Such tables are rewritten as a copy
// of themselves in the background, one at a time: after a load that made
// more groups than one write would, and when their owner's database first
// opens in a process.

// fullRowGroups is how many row groups one write of rows makes.
func fullRowGroups(rows int64) int64 { return max(1, (rows+ownerRowGroup-1)/ownerRowGroup) }

// RowGroups counts the row groups table id is stored in. Errors: as a
// query's.
func (s *Store) RowGroups(ctx context.Context, id string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT row_group_id) FROM pragma_storage_info(?)`, "data."+ducksql.Ident(id)).Scan(&n)
	return n, classify(ctx, err)
}

// compactNext rewrites in full row groups the next table of the owner's
// DuckDB file stored in more row groups than one write makes, and reports
// whether it rewrote one; tables found full, or rewritten, are
// remembered, so each is counted once a process and rewritten once.
func (s *Store) compactNext(ctx context.Context) (bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, row_count FROM dd_tables WHERE location = ? ORDER BY created_at`, catalog.LocationDuckDB)
	if err != nil {
		return false, classify(ctx, err)
	}
	type table struct {
		id   string
		rows int64
	}
	var tables []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.id, &t.rows); err != nil {
			rows.Close()
			return false, classify(ctx, err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	for _, t := range tables {
		if s.tables.isFull(t.id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		groups, err := s.RowGroups(ctx, t.id)
		if err != nil {
			return false, err
		}
		if groups <= fullRowGroups(t.rows) {
			s.tables.setFull(t.id)
			continue
		}
		start := time.Now()
		if err := s.rewrite(ctx, t.id); err != nil {
			return false, err
		}
		s.tables.setFull(t.id)
		s.logger.Info("rewrote a table in full row groups", "table", t.id, "rows", t.rows, "row_groups", groups,
			"full", fullRowGroups(t.rows), "ms", time.Since(start).Milliseconds())
		return true, nil
	}
	return false, nil
}

// LaidOut reports whether table id was found stored in full row groups
// or was rewritten in them since the process started. A table loaded in
// more row groups than one write makes is rewritten soon after its load;
// until then this is false.
func (s *Store) LaidOut(id string) bool { return s.tables.isFull(id) }

// markLaidOut records that every table of the database was found in full
// row groups, so that a later process does not count them again.
func (s *Store) markLaidOut(ctx context.Context) error {
	return s.inTx(ctx, func(conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, `INSERT INTO dd_layout VALUES (?)`, ownerRowGroup)
		return classify(ctx, err)
	})
}

// unmarkLaidOut, in the transaction of a load, records that the database
// is not known to be laid out if the load made a table that may be in
// more row groups than one write makes: the pass after the load marks it
// again, and a process stopped before leaves the next to go through it.
func unmarkLaidOut(ctx context.Context, conn *sql.Conn, tables []catalog.Table) error {
	for _, t := range tables {
		if mayBePartFilled(&t) {
			_, err := conn.ExecContext(ctx, `DELETE FROM dd_layout`)
			return classify(ctx, err)
		}
	}
	return nil
}

// mayBePartFilled reports whether a table just written may be in more row
// groups than one write makes: one in DuckDB of more rows than a row
// group holds.
func mayBePartFilled(t *catalog.Table) bool {
	return location(t) == catalog.LocationDuckDB && t.RowCount > ownerRowGroup
}

// compactLoaded asks for the tables a load just made to be rewritten in
// full row groups if they are not. A table of no more rows than one row
// group holds is in one.
func (s *Store) compactLoaded(tables []catalog.Table) {
	soon := false
	for _, t := range tables {
		switch {
		case mayBePartFilled(&t):
			soon = true
		case location(&t) == catalog.LocationDuckDB:
			s.tables.setFull(t.ID)
		}
	}
	if soon && s.compactSoon != nil {
		s.compactSoon()
	}
}

// layoutRecorded reports whether every table of the database was found stored in
// full row groups.
func (s *Store) layoutRecorded(ctx context.Context) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM dd_layout WHERE row_group_size >= ?`, ownerRowGroup).Scan(&n)
	return n > 0, classify(ctx, err)
}

// rewrite copies table id into full row groups and puts the copy in its
// place. The copy is made outside the write lock (a stored table never
// changes), so calls go on meanwhile; the swap holds it a moment. A copy
// left by a crash is dropped at the next open as an orphan.
func (s *Store) rewrite(ctx context.Context, id string) error {
	full := id + "__full"
	defs, err := s.copyColumns(ctx, id)
	if err != nil {
		return err
	}
	// In rowid's order: the rows keep theirs, and the copy is written as
	// one stream. Copied as they come, the engine's instance (which writes
	// each row group out as it fills) ends each thread's share in a
	// part-filled group: 11 groups for 1,000,000 rows, against 9.
	for _, q := range []string{
		`CREATE OR REPLACE TABLE data.` + ducksql.Ident(full) + ` (` + strings.Join(defs, ", ") + `)`,
		`INSERT INTO data.` + ducksql.Ident(full) + ` SELECT * FROM data.` + ducksql.Ident(id) + ` ORDER BY rowid`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return classify(ctx, err)
		}
	}
	return s.inTx(ctx, func(conn *sql.Conn) error {
		var still int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM dd_tables WHERE id = ? AND location = ?`, id, catalog.LocationDuckDB).Scan(&still); err != nil {
			return classify(ctx, err)
		}
		stmts := []string{`DROP TABLE data.` + ducksql.Ident(id), `ALTER TABLE data.` + ducksql.Ident(full) + ` RENAME TO ` + ducksql.Ident(id)}
		if still == 0 {
			// Deleted or moved while it was copied.
			stmts = []string{`DROP TABLE data.` + ducksql.Ident(full)}
		}
		for _, q := range stmts {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return classify(ctx, err)
			}
		}
		return nil
	})
}

// keptCompressions are the text compressions a rewrite keeps, by the
// name pragma_storage_info gives them: those a load chooses for a text
// column (compressionFor).
var keptCompressions = map[string]string{"Dictionary": "dictionary", "FSST": "fsst"}

// copyColumns defines the columns of table id's copy: each column's name
// and type, and the compression of a text column whose every segment is
// stored in one of keptCompressions. Left to choose, DuckDB now and then
// stores a row group of a column that is a dictionary everywhere else in
// FSST (under a memory limit, 4 copies in 10 of the 1,000,000 orders'
// last row group), which a contains filter scans 1.7 times as slowly;
// the compression the load chose, or DuckDB chose for every segment,
// holds for the whole copy. DuckDB still stores a segment uncompressed
// where that is smaller.
func (s *Store) copyColumns(ctx context.Context, id string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.column_name, c.data_type, s.compression
		FROM duckdb_columns() c LEFT JOIN (
			SELECT column_name, min(compression) AS compression FROM pragma_storage_info(?)
			WHERE segment_type = 'VARCHAR' GROUP BY column_name HAVING count(DISTINCT compression) = 1) s
		ON s.column_name = c.column_name AND c.data_type = 'VARCHAR'
		WHERE c.database_name = current_database() AND c.schema_name = 'data' AND c.table_name = ?
		ORDER BY c.column_index`, "data."+ducksql.Ident(id), id)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	var defs []string
	for rows.Next() {
		var name, typ string
		var compression sql.NullString
		if err := rows.Scan(&name, &typ, &compression); err != nil {
			return nil, classify(ctx, err)
		}
		def := ducksql.Ident(name) + " " + typ
		if c, ok := keptCompressions[compression.String]; ok {
			def += " USING COMPRESSION " + c
		}
		defs = append(defs, def)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, err)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("engine: rewrite of %s: the table has no columns", id)
	}
	return defs, nil
}

// compactLater rewrites, in the background, an owner's tables stored in
// more row groups than one write makes, one table per turn, acquiring the
// store for each so that closing it waits for one rewrite at most. At the
// first open in a process (whole), a database not yet found laid out is
// gone through; after a load, the tables not yet counted are. A rewrite
// unmarks the database and the pass that finds nothing more to rewrite
// marks it, so that a process stopped in between leaves the next to
// finish. One rewriter runs per owner: a call while it runs makes it
// go through the tables once more.
func (e *Engine) compactLater(owner string, whole bool) {
	e.mu.Lock()
	if _, running := e.compacting[owner]; running {
		e.compacting[owner] = true
		e.mu.Unlock()
		return
	}
	e.compacting[owner] = false
	e.mu.Unlock()
	go func() {
		defer func() {
			e.mu.Lock()
			delete(e.compacting, owner)
			e.mu.Unlock()
		}()
		for {
			again, err := e.compactTurn(owner, whole)
			if err != nil {
				e.cfg.Logger.Error("rewrite a table in full row groups", "owner", owner, "err", err)
				return
			}
			if again {
				continue
			}
			e.mu.Lock()
			more := e.compacting[owner]
			e.compacting[owner] = false
			e.mu.Unlock()
			if !more {
				return
			}
			whole = false
		}
	}()
}

// compactTurn rewrites one table of owner's if one needs it, and reports
// whether there may be another.
func (e *Engine) compactTurn(owner string, whole bool) (bool, error) {
	select {
	case <-e.stop:
		return false, nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	s, release, err := e.Acquire(ctx, owner)
	if err != nil {
		// Closing, or the owner is gone: the next open counts again.
		return false, nil
	}
	defer release()
	if whole {
		if recorded, err := s.layoutRecorded(ctx); err != nil || recorded {
			return false, err
		}
	}
	did, err := s.compactNext(ctx)
	if err != nil || did {
		return did, err
	}
	recorded, err := s.layoutRecorded(ctx)
	if err == nil && !recorded {
		err = s.markLaidOut(ctx)
	}
	return false, err
}

// Segments counts the data segments each column of table id is stored
// in, by column key: each segment of a text column carries its own
// dictionary, so a table cut into more segments than a copy of it is
// scanned more slowly. Errors: as a query's.
func (s *Store) Segments(ctx context.Context, id string) (map[string]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT column_name, count(*) FROM pragma_storage_info(?) WHERE segment_type <> 'VALIDITY' GROUP BY ALL`, "data."+ducksql.Ident(id))
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var col string
		var n int64
		if err := rows.Scan(&col, &n); err != nil {
			return nil, classify(ctx, err)
		}
		out[col] = n
	}
	return out, classify(ctx, rows.Err())
}
