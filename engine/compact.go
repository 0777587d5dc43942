package engine

import (
	"context"
	"database/sql"
	"time"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// A table is scanned fastest in full row groups: DuckDB evaluates a
// filter once per dictionary entry of a row group, and a table written in
// small ones (as owners' databases were, 16,384 rows each, for what a load
// held) has more entries to evaluate and less compressed columns. Every
// load now writes row groups of ownerRowGroup rows; tables written before
// are rewritten in the background, one at a time, when their owner's
// database first opens.

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
// DuckDB file stored in more than one row group past what one write makes,
// and reports whether it rewrote one; tables found full are remembered, so
// each is counted once a process.
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
		if groups <= fullRowGroups(t.rows)+1 {
			s.tables.setFull(t.id)
			continue
		}
		if err := s.rewrite(ctx, t.id); err != nil {
			return false, err
		}
		s.tables.setFull(t.id)
		return true, nil
	}
	return false, s.inTx(ctx, func(conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, `INSERT INTO dd_layout VALUES (?)`, ownerRowGroup)
		return classify(ctx, err)
	})
}

// laidOut reports whether every table of the database was found stored in
// full row groups.
func (s *Store) laidOut(ctx context.Context) (bool, error) {
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
	if _, err := s.db.ExecContext(ctx, `CREATE OR REPLACE TABLE data.`+ducksql.Ident(full)+` AS SELECT * FROM data.`+ducksql.Ident(id)); err != nil {
		return classify(ctx, err)
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

// compactLater rewrites, in the background, an owner's tables stored in
// small row groups, one table per turn, acquiring the store for each so
// that closing it waits for one rewrite at most.
func (e *Engine) compactLater(owner string) {
	go func() {
		for {
			select {
			case <-e.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			s, release, err := e.Acquire(ctx, owner)
			if err != nil {
				cancel()
				return
			}
			done, err := s.laidOut(ctx)
			did := false
			if err == nil && !done {
				did, err = s.compactNext(ctx)
			}
			release()
			cancel()
			if err != nil {
				e.cfg.Logger.Error("rewrite a table in full row groups", "owner", owner, "err", err)
				return
			}
			if !did {
				return
			}
		}
	}()
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
