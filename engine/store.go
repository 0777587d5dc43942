package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
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

	// tables caches catalog entries by table id and by file id (its first
	// sheet). A stored table never changes; deleting a file clears it.
	cacheMu sync.RWMutex
	tables  map[string]*Table

	// remote holds tables whose catalog location is not DuckDB.
	remote        Backend
	remoteMinRows int64

	// staged makes CSV and JSON files DuckDB can read take the staged
	// path instead of the direct load (tests compare the two).
	staged bool
}

// catalogDDL creates the catalog. Each entry is one statement: the driver
// runs every statement of a stacked string, so the engine never sends more
// than one at a time.
var catalogDDL = []string{
	`CREATE SCHEMA IF NOT EXISTS data`,
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
}

// dsn returns the settings every instance opens with. External access is off
// (SQL can read no file), extensions neither autoload nor install, and the
// configuration is locked so no later statement can loosen it.
// disabled_filesystems is deliberately not used: it breaks spilling and
// checkpoints on file databases.
func dsn(cfg Config, path string) string {
	q := url.Values{}
	q.Set("enable_external_access", "false")
	q.Set("autoload_known_extensions", "false")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("allow_community_extensions", "false")
	q.Set("threads", strconv.Itoa(cfg.Threads))
	q.Set("memory_limit", cfg.MemoryLimit)
	q.Set("max_temp_directory_size", cfg.MaxTempSize)
	q.Set("lock_configuration", "true")
	return path + "?" + q.Encode()
}

// ownerDSN is dsn for an owner's database, which may read its own incoming
// directory: external access and the lock are set by lockOwner once
// allowed_directories is, which the DSN cannot carry.
func ownerDSN(cfg Config, path string) string {
	q := url.Values{}
	q.Set("autoload_known_extensions", "false")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("allow_community_extensions", "false")
	q.Set("threads", strconv.Itoa(cfg.Threads))
	q.Set("memory_limit", cfg.MemoryLimit)
	q.Set("max_temp_directory_size", cfg.MaxTempSize)
	return path + "?" + q.Encode()
}

// lockOwner lets SQL of an owner's database touch its incoming directory
// only (read_csv of uploads), then turns external access off and locks the
// configuration, before any other statement runs.
func lockOwner(ctx context.Context, db *sql.DB, incoming string) error {
	for _, stmt := range []string{
		`SET GLOBAL allowed_directories = [` + quoteString(incoming+string(filepath.Separator)) + `]`,
		`SET GLOBAL enable_external_access = false`,
		`SET GLOBAL lock_configuration = true`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

func openStore(ctx context.Context, cfg Config, owner string) (*Store, error) {
	dir, err := filepath.Abs(filepath.Join(cfg.Dir, "owners", owner))
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "files"), filepath.Join(dir, "incoming")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	connector, err := duckdb.NewConnector(ownerDSN(cfg, filepath.Join(dir, "owner.duckdb")), nil)
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", owner, err)
	}
	s := &Store{owner: owner, dir: dir, db: sql.OpenDB(connector), logger: cfg.Logger.With("owner", owner), tables: map[string]*Table{},
		remote: cfg.Remote, remoteMinRows: cfg.RemoteMinRows}
	if err := lockOwner(ctx, s.db, filepath.Join(dir, "incoming")); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("engine: settings of %s: %w", owner, err)
	}
	for _, stmt := range catalogDDL {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("engine: catalog of %s: %w", owner, err)
		}
	}
	if err := s.recover(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// recover removes what an interrupted upload left behind: temp files,
// original bytes without a catalog row and tables without one. A table and
// its catalog row commit together, so a crash leaves either both or neither;
// bytes are renamed into place before that commit and are orphans if it never
// happened.
func (s *Store) recover(ctx context.Context) error {
	incoming := filepath.Join(s.dir, "incoming")
	if entries, err := os.ReadDir(incoming); err == nil {
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(incoming, e.Name()))
		}
	}
	known := map[string]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM dd_files`)
	if err != nil {
		return fmt.Errorf("engine: recover: %w", err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("engine: recover: %w", err)
		}
		known[id] = true
	}
	rows.Close()
	files := filepath.Join(s.dir, "files")
	entries, err := os.ReadDir(files)
	if err != nil {
		return fmt.Errorf("engine: recover: %w", err)
	}
	for _, e := range entries {
		if !known[e.Name()] {
			s.logger.Warn("removing bytes of an unfinished upload", "file", e.Name())
			_ = os.RemoveAll(filepath.Join(files, e.Name()))
		}
	}
	orphans, err := s.orphanTables(ctx)
	if err != nil {
		return err
	}
	for _, t := range orphans {
		s.logger.Warn("dropping table without catalog row", "table", t)
		if _, err := s.db.ExecContext(ctx, `DROP TABLE IF EXISTS data.`+quoteIdent(t)); err != nil {
			return fmt.Errorf("engine: recover: %w", err)
		}
	}
	return nil
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

func (s *Store) close() error {
	return s.db.Close()
}

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
