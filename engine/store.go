package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// Store is one owner's database: the catalog of their files and tables, the
// tables themselves, and the directory of original bytes beside it.
type Store struct {
	owner  string
	dir    string
	db     *sql.DB
	logger *slog.Logger

	// writeMu serialises catalog changes so that two uploads of one owner
	// never race on DDL; reads go on concurrently.
	writeMu sync.Mutex
	// movesMu lets one table move or one sweep of moves' old copies run
	// at a time: a sweep that read the journal before a move began would
	// drop the copy the move writes under the same name.
	movesMu sync.Mutex
	// orderMu guards orders, the tables' stored orders known to exist
	// (rows.go), so that one is stored once.
	orderMu sync.Mutex
	orders  map[string]bool

	// tables caches catalog entries; it outlives the store's connections
	// (tableCaches).
	tables *tableCache

	// remote holds tables whose catalog location is not DuckDB.
	remote        catalog.Backend
	remoteMinRows int64

	// sweepLater drops the copies a move retired once readers are done
	// with them.
	sweepLater  func()
	retireAfter time.Duration
	// testHookMoveOut, when set by a test, runs as a move out begins to
	// write its copy on the backend, under the moves' lock.
	testHookMoveOut func()
	// compactSoon rewrites, in the background, tables a load left in more
	// row groups than a copy of them has (compact.go).
	compactSoon func()

	// maxWidth is the widest table this server loads (Engine.MaxWidth).
	maxWidth int
	// maxBytes bounds the owner's storage (Config.MaxOwnerBytes).
	maxBytes int64

	// staged makes CSV and JSON files DuckDB can read take the staged
	// path instead of the direct load (tests compare the two).
	staged bool
}

// catalogDDL creates the catalog. Each entry is one statement: the driver
// runs every statement of a stacked string, so the engine never sends more
// than one at a time.
var catalogDDL = []string{
	`CREATE SCHEMA IF NOT EXISTS data`,
	// dd_order holds tables' orders stored for deep pages (rows.go).
	`CREATE SCHEMA IF NOT EXISTS dd_order`,
	`CREATE TABLE IF NOT EXISTS dd_files (
		id VARCHAR PRIMARY KEY,
		filename VARCHAR NOT NULL,
		content_type VARCHAR NOT NULL,
		size BIGINT NOT NULL,
		sha256 VARCHAR NOT NULL,
		chat_session_id VARCHAR NOT NULL,
		created_at TIMESTAMP NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS dd_tables (
		id VARCHAR PRIMARY KEY,
		file_id VARCHAR NOT NULL,
		ordinal INTEGER NOT NULL,
		name VARCHAR NOT NULL,
		row_count BIGINT NOT NULL,
		report VARCHAR NOT NULL,
		kind VARCHAR NOT NULL DEFAULT 'sheet',
		source_table_id VARCHAR,
		query VARCHAR,
		created_at TIMESTAMP NOT NULL)`,
	// dd_moves is the journal of moves between DuckDB and the remote
	// backend: a copy being made (kind "copy") and an old copy left for
	// readers that had already found it (kind "retired"), each dropped by
	// sweepMoves once it is no longer the table's place.
	`CREATE TABLE IF NOT EXISTS dd_moves (
		table_id VARCHAR NOT NULL,
		location VARCHAR NOT NULL,
		kind VARCHAR NOT NULL,
		since TIMESTAMP NOT NULL)`,
	// dd_views are views of a table saved by name from its page: the
	// page's address after the table's (filters, search, sort).
	`CREATE TABLE IF NOT EXISTS dd_views (
		id VARCHAR PRIMARY KEY,
		table_id VARCHAR NOT NULL,
		name VARCHAR NOT NULL,
		query VARCHAR NOT NULL,
		created_at TIMESTAMP NOT NULL)`,
	// dd_layout records that every table of the database is stored in
	// row groups of row_group_size rows (compact.go).
	`CREATE TABLE IF NOT EXISTS dd_layout (row_group_size INTEGER NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS dd_labels (
		table_id VARCHAR PRIMARY KEY,
		labels VARCHAR NOT NULL,
		author VARCHAR NOT NULL,
		updated_at TIMESTAMP NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS dd_columns (
		table_id VARCHAR NOT NULL,
		ordinal INTEGER NOT NULL,
		key VARCHAR NOT NULL,
		label VARCHAR NOT NULL,
		type VARCHAR NOT NULL,
		identifier BOOLEAN NOT NULL,
		reason VARCHAR NOT NULL)`,
	`ALTER TABLE dd_tables ADD COLUMN IF NOT EXISTS location VARCHAR DEFAULT 'duckdb'`,
	// digits is catalog.Column.Digits; 0 (not measured) for columns
	// loaded before it was.
	`ALTER TABLE dd_columns ADD COLUMN IF NOT EXISTS digits TINYINT DEFAULT 0`,
	// unit is catalog.Column.Unit, from a header's units row.
	`ALTER TABLE dd_columns ADD COLUMN IF NOT EXISTS unit VARCHAR DEFAULT ''`,
}

// openStore attaches owner's database to the hub. The first open since the
// process started also creates the catalog and removes what a crash left
// behind; later ones find both done.
func (e *Engine) openStore(ctx context.Context, owner string, first bool) (*Store, error) {
	dir, err := filepath.Abs(e.OwnerDir(owner))
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if first {
		for _, d := range []string{dir, filepath.Join(dir, "files"), filepath.Join(dir, "incoming")} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("engine: %w", err)
			}
		}
	}
	if err := e.hub.attach(ctx, owner, filepath.Join(dir, "owner.duckdb")); err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", owner, err)
	}
	s := &Store{owner: owner, dir: dir, db: e.hub.catalog(owner), logger: e.cfg.Logger.With("owner", owner), tables: e.caches.of(owner),
		remote: e.cfg.Remote, remoteMinRows: e.cfg.RemoteMinRows, sweepLater: func() { e.sweepLater(owner) }, retireAfter: e.cfg.RetireAfter,
		compactSoon: func() { e.compactLater(owner, false) },
		maxWidth:    e.maxWidth, maxBytes: e.cfg.MaxOwnerBytes}
	if first {
		err = s.prepare(ctx)
	}
	if err != nil {
		if cerr := e.closeStore(s); cerr != nil {
			e.cfg.Logger.Error("close owner store", "owner", owner, "err", cerr)
		}
		return nil, err
	}
	return s, nil
}

// closeStore closes s's connections and detaches its database.
func (e *Engine) closeStore(s *Store) error {
	err := s.db.Close()
	if derr := e.hub.detach(context.Background(), s.owner); err == nil {
		err = derr
	}
	return err
}

// prepare creates the catalog, or brings an older one up to date, and
// recovers from a crash.
func (s *Store) prepare(ctx context.Context) error {
	// The newest parts of the catalog answer when the rest is there too;
	// then the statements that create it are not run again.
	if _, err := s.db.ExecContext(ctx, `SELECT 1 FROM dd_moves, dd_views, dd_layout LIMIT 0`); err != nil {
		for _, stmt := range catalogDDL {
			if _, err := s.db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("engine: catalog of %s: %w", s.owner, err)
			}
		}
		// A catalog with no table yet has nothing written in small row
		// groups: it needs no rewrite (compact.go).
		if _, err := s.db.ExecContext(ctx, `INSERT INTO dd_layout SELECT ? WHERE NOT EXISTS (SELECT 1 FROM dd_tables) AND NOT EXISTS (SELECT 1 FROM dd_layout)`,
			ownerRowGroup); err != nil {
			return fmt.Errorf("engine: catalog of %s: %w", s.owner, err)
		}
	}
	if err := s.recover(ctx); err != nil {
		return err
	}
	// Copies a killed move left, and old copies past their time, go now.
	return s.sweepMoves(ctx, time.Now().Add(-s.retireAfter), true)
}

// recover removes what an interrupted upload left behind: temp files,
// original bytes without a catalog row and tables without one. A table and
// its catalog row commit together, so a crash leaves either both or neither;
// bytes are renamed into place before that commit and are orphans if it never
// happened. Tables are looked for only when an upload was interrupted (a
// temp file or orphan bytes remain): listing them reads the catalogs of
// every attached owner.
func (s *Store) recover(ctx context.Context) error {
	incoming := filepath.Join(s.dir, "incoming")
	interrupted := false
	if entries, err := os.ReadDir(incoming); err == nil {
		for _, e := range entries {
			interrupted = true
			_ = os.RemoveAll(filepath.Join(incoming, e.Name()))
		}
	}
	files := filepath.Join(s.dir, "files")
	entries, err := os.ReadDir(files)
	if err != nil {
		return fmt.Errorf("engine: recover: %w", err)
	}
	if len(entries) > 0 {
		known, err := s.fileIDs(ctx)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !known[e.Name()] {
				interrupted = true
				s.logger.Warn("removing bytes of an unfinished upload", "file", e.Name())
				_ = os.RemoveAll(filepath.Join(files, e.Name()))
			}
		}
	}
	if !interrupted {
		return nil
	}
	orphans, err := s.orphanTables(ctx)
	if err != nil {
		return err
	}
	for _, t := range orphans {
		s.logger.Warn("dropping table without catalog row", "table", t)
		if _, err := s.db.ExecContext(ctx, `DROP TABLE IF EXISTS data.`+ducksql.Ident(t)); err != nil {
			return fmt.Errorf("engine: recover: %w", err)
		}
	}
	return nil
}

// fileIDs returns the ids of the catalog's files.
func (s *Store) fileIDs(ctx context.Context) (map[string]bool, error) {
	known := map[string]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM dd_files`)
	if err != nil {
		return nil, fmt.Errorf("engine: recover: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("engine: recover: %w", err)
		}
		known[id] = true
	}
	return known, rows.Err()
}

func (s *Store) orphanTables(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables()
		WHERE schema_name = 'data' AND database_name = current_database()
		AND table_name NOT IN (SELECT id FROM dd_tables)`)
	if err != nil {
		return nil, fmt.Errorf("engine: recover: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// inTx runs fn inside a transaction on one connection, holding the write
// lock; it commits when fn returns nil and rolls back otherwise.
func (s *Store) inTx(ctx context.Context, fn func(conn *sql.Conn) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// Whatever came of it, the data may have changed: answers kept under
	// the version before are not read again. Changed after the commit, so
	// that a call taken once the write has returned never sees the old.
	defer s.tables.bump()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return classify(ctx, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN TRANSACTION`); err != nil {
		return classify(ctx, err)
	}
	if err := fn(conn); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		return err
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		return classify(ctx, err)
	}
	return nil
}

// Version returns the owner's data version: every write to the owner's
// tables or files (an upload, a new reading, a move, a delete, a stored
// view) gives a new one, never used before on this node. Taken before a
// read, it names the data the read saw or newer.
func (s *Store) Version() uint64 { return s.tables.version.Load() }

// Owner returns the id of the store's owner.
func (s *Store) Owner() string { return s.owner }

// IncomingDir returns a directory for temporary files of uploads in progress;
// it is emptied when the store opens.
func (s *Store) IncomingDir() string { return filepath.Join(s.dir, "incoming") }

// BytesPath returns where the original bytes of file id are kept.
func (s *Store) BytesPath(id string) string { return filepath.Join(s.dir, "files", id) }

// errIs reports whether err is a DuckDB error of type t.
func errIs(err error, t duckdb.ErrorType) bool {
	var de *duckdb.Error
	return errors.As(err, &de) && de.Type == t
}
