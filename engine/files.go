package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// NewFile is a file to add: its bytes, already written to a temporary
// path (AddFile syncs them while the tables load), and the tables read
// from them.
type NewFile struct {
	Filename    string
	ContentType string
	ChatSession string
	// TempPath holds the bytes; AddFile moves it into the store.
	TempPath string
	// SHA256, if set, is the hex SHA-256 of TempPath's Size bytes, taken
	// as they were written: AddFile then only syncs them, not reading
	// them again.
	SHA256 string
	Size   int64
	Tables []TableSource
	// CopyOf, if set, is a stored table whose data becomes the file's table,
	// copied inside the database.
	CopyOf string
	// Admit, if set, sees the loaded tables before anything commits; an
	// error from it leaves nothing of the file.
	Admit func(tables []catalog.Table) error
}

// AddFile stores a file and ingests its tables. The tables and the catalog
// rows commit in one transaction; on any error nothing of the file remains.
// Errors: invalid or too_large from the table sources, too_large past the
// owner's files or storage (MaxFiles, Config.MaxOwnerBytes), timeout when
// ctx ends.
func (s *Store) AddFile(ctx context.Context, nf NewFile) (*catalog.File, error) {
	// Refused before the load's work when the size is known; checked
	// again, with the bytes hashed, before the file's row is written.
	if err := s.room(ctx, s.db, true, nf.Size); err != nil {
		return nil, err
	}
	// The bytes are hashed and synced to disk while the tables load: the
	// load is DuckDB's work, mostly on its own threads, and nothing
	// commits before both are done.
	hashing := make(chan hashed, 1)
	go func() {
		h := hashed{size: nf.Size, sum: nf.SHA256}
		if h.sum == "" {
			h.size, h.sum, h.err = hashFile(nf.TempPath)
		} else {
			h.err = syncPath(nf.TempPath)
		}
		hashing <- h
	}()
	f := &catalog.File{
		ID:          datadesk.NewID("f"),
		Filename:    nf.Filename,
		ContentType: nf.ContentType,
		ChatSession: nf.ChatSession,
		CreatedAt:   time.Now().UTC().Truncate(time.Microsecond),
	}

	final := s.BytesPath(f.ID)
	err := s.inTx(ctx, func(conn *sql.Conn) error { return s.addTables(ctx, conn, f, nf, hashing, final) })
	var refused *readRefused
	if errors.As(err, &refused) {
		// DuckDB's reader gave up on a file, failing the transaction: the
		// file is read again, in a new one, by Go's reader.
		s.dropLoaded(context.WithoutCancel(ctx), f.Tables)
		f.Tables = nil
		nf.Tables = slices.Clone(nf.Tables)
		nf.Tables[refused.ordinal].CSV, nf.Tables[refused.ordinal].JSON = nil, nil
		err = s.inTx(ctx, func(conn *sql.Conn) error { return s.addTables(ctx, conn, f, nf, hashing, final) })
	}
	if err != nil {
		_ = os.Remove(final)
		s.dropLoaded(context.WithoutCancel(ctx), f.Tables)
		return nil, err
	}
	s.placeLarge(ctx, f)
	s.compactLoaded(f.Tables)
	return f, nil
}

// addTables loads nf's tables as file f inside the transaction open on
// conn, then records the file, its hash (from hashing) and its bytes at
// final.
func (s *Store) addTables(ctx context.Context, conn *sql.Conn, f *catalog.File, nf NewFile, hashing <-chan hashed, final string) error {
	for i, src := range nf.Tables {
		t, err := s.load(ctx, conn, f, i, src)
		if err != nil {
			return err
		}
		f.Tables = append(f.Tables, *t)
	}
	if nf.CopyOf != "" {
		t, err := s.copyTable(ctx, conn, f, nf.CopyOf)
		if err != nil {
			return err
		}
		f.Tables = append(f.Tables, *t)
	}
	if nf.Admit != nil {
		if err := nf.Admit(f.Tables); err != nil {
			return err
		}
	}
	h := <-hashing
	if NoSpace(h.err) {
		return NoSpaceError(h.err)
	}
	if h.err != nil {
		return fmt.Errorf("engine: add file: %w", h.err)
	}
	f.Size, f.SHA256 = h.size, h.sum
	if err := s.room(ctx, conn, true, f.Size); err != nil {
		return err
	}
	if err := unmarkLaidOut(ctx, conn, f.Tables); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO dd_files VALUES (?, ?, ?, ?, ?, ?, ?)`,
		f.ID, f.Filename, f.ContentType, f.Size, f.SHA256, f.ChatSession, f.CreatedAt); err != nil {
		return classify(ctx, err)
	}
	// The bytes go into place before the commit: a crash between the
	// two leaves orphan bytes, which recover removes, never a row
	// without bytes.
	if err := os.Rename(nf.TempPath, final); err != nil {
		return fmt.Errorf("engine: add file: %w", err)
	}
	if err := syncPath(filepath.Dir(final)); err != nil {
		return fmt.Errorf("engine: add file: %w", err)
	}
	return nil
}

// hashed is a file's size and SHA-256, or why they are missing.
type hashed struct {
	size int64
	sum  string
	err  error
}

// hashFile returns the size and SHA-256 of the file at path, once its
// bytes are synced to disk.
func hashFile(path string) (int64, string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err == nil {
		err = fh.Sync()
	}
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// syncPath syncs the file or directory at path to disk.
func syncPath(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return fh.Sync()
}

// Files returns the owner's files, newest first. A non-empty chatSession
// keeps only that session's files; limit <= 0 means all.
func (s *Store) Files(ctx context.Context, chatSession string, limit int) ([]catalog.File, error) {
	q := `SELECT id, filename, content_type, size, sha256, chat_session_id, created_at FROM dd_files`
	var args []any
	if chatSession != "" {
		q += ` WHERE chat_session_id = ?`
		args = append(args, chatSession)
	}
	q += ` ORDER BY created_at DESC, id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	out, _, err := s.filesWhere(ctx, q, args...)
	return out, err
}

// filesWhere reads the files query q selects (the columns of dd_files in
// their order, and, when total is true, a count after them), with their
// tables read in one more statement, however many files there are.
func (s *Store) filesWhere(ctx context.Context, q string, args ...any) ([]catalog.File, int, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, classify(ctx, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, 0, classify(ctx, err)
	}
	var out []catalog.File
	total := 0
	for rows.Next() {
		var f catalog.File
		dest := []any{&f.ID, &f.Filename, &f.ContentType, &f.Size, &f.SHA256, &f.ChatSession, &f.CreatedAt}
		if len(cols) > len(dest) {
			dest = append(dest, &total)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, 0, classify(ctx, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, classify(ctx, err)
	}
	if len(out) == 0 {
		return out, total, nil
	}
	ids := make([]any, len(out))
	at := make(map[string]int, len(out))
	for i := range out {
		ids[i], at[out[i].ID] = out[i].ID, i
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	tables, err := s.tablesWhere(ctx, `kind = 'sheet' AND file_id IN (`+marks+`) ORDER BY file_id, ordinal`, ids...)
	if err != nil {
		return nil, 0, err
	}
	for _, t := range tables {
		f := &out[at[t.FileID]]
		f.Tables = append(f.Tables, t)
	}
	return out, total, nil
}

// StoredResults returns the tables the owner's calls stored (an analysis
// or a query shown as a table), newest first, at most limit.
func (s *Store) StoredResults(ctx context.Context, limit int) ([]catalog.Table, error) {
	return s.tablesWhere(ctx, `kind = 'view' ORDER BY created_at DESC, id LIMIT ?`, limit)
}

// File returns one file with its tables. Errors: not_found.
func (s *Store) File(ctx context.Context, id string) (*catalog.File, error) {
	if f, ok := s.tables.getFile(id); ok {
		return f, nil
	}
	version := s.tables.version.Load()
	var f catalog.File
	err := s.db.QueryRowContext(ctx, `SELECT id, filename, content_type, size, sha256, chat_session_id, created_at
		FROM dd_files WHERE id = ?`, id).Scan(&f.ID, &f.Filename, &f.ContentType, &f.Size, &f.SHA256, &f.ChatSession, &f.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errFileNotFound(id)
	}
	if err != nil {
		return nil, classify(ctx, err)
	}
	if f.Tables, err = s.tablesOf(ctx, id); err != nil {
		return nil, err
	}
	s.tables.putFile(&f, version)
	return &f, nil
}

func errFileNotFound(id string) error {
	return datadesk.Errorf(datadesk.NotFound, "no file with id %q", id).WithField("file_id")
}

func (s *Store) tablesOf(ctx context.Context, fileID string) ([]catalog.Table, error) {
	return s.tablesWhere(ctx, `file_id = ? AND kind = 'sheet' ORDER BY ordinal`, fileID)
}

// tablesWhere returns the tables the catalog's rows matching where (with
// its order) name, each as Table reads it.
func (s *Store) tablesWhere(ctx context.Context, where string, args ...any) ([]catalog.Table, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM dd_tables WHERE `+where, args...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, classify(ctx, err)
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, classify(ctx, err)
	}
	if err := s.cacheTables(ctx, ids); err != nil {
		return nil, err
	}
	out := make([]catalog.Table, 0, len(ids))
	for _, id := range ids {
		t, err := s.Table(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, nil
}

// cacheTables reads the catalog entries of the tables ids names that are
// not cached yet, all in two statements, and caches them.
func (s *Store) cacheTables(ctx context.Context, ids []string) error {
	var missing []any
	for _, id := range ids {
		if _, ok := s.tables.get(id); !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) < 2 {
		return nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(missing)), ", ")
	read := map[string]*catalog.Table{}
	rows, err := s.db.QueryContext(ctx, `SELECT id, file_id, name, ordinal, row_count, report, source_table_id, query, created_at, location
		FROM dd_tables WHERE id IN (`+marks+`)`, missing...)
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTable(rows)
		if err != nil {
			return classify(ctx, err)
		}
		read[t.ID] = t
	}
	if err := rows.Err(); err != nil {
		return classify(ctx, err)
	}
	cols, err := s.db.QueryContext(ctx, `SELECT table_id, key, label, type, identifier, reason, coalesce(digits, 0) FROM dd_columns
		WHERE table_id IN (`+marks+`) ORDER BY table_id, ordinal`, missing...)
	if err != nil {
		return classify(ctx, err)
	}
	defer cols.Close()
	for cols.Next() {
		var id string
		var c catalog.Column
		var digits int
		if err := cols.Scan(&id, &c.Key, &c.Label, &c.Type, &c.Identifier, &c.Reason, &digits); err != nil {
			return classify(ctx, err)
		}
		c.Digits = catalog.Digits(digits)
		if t := read[id]; t != nil {
			t.Columns = append(t.Columns, c)
		}
	}
	if err := cols.Err(); err != nil {
		return classify(ctx, err)
	}
	for id, t := range read {
		s.tables.put(id, t)
	}
	return nil
}

// scanTable reads a catalog row of dd_tables: id, file_id, name,
// ordinal, row_count, report, source_table_id, query, created_at and
// location, in that order.
func scanTable(row interface{ Scan(...any) error }) (*catalog.Table, error) {
	var t catalog.Table
	var report string
	var source, query, location sql.NullString
	if err := row.Scan(&t.ID, &t.FileID, &t.Name, &t.Ordinal, &t.RowCount, &report, &source, &query, &t.CreatedAt, &location); err != nil {
		return nil, err
	}
	t.SourceTableID, t.Query, t.Location = source.String, query.String, location.String
	if t.Location == "" {
		t.Location = catalog.LocationDuckDB
	}
	if err := json.Unmarshal([]byte(report), &t.Report); err != nil {
		return nil, fmt.Errorf("engine: report of %s: %w", t.ID, err)
	}
	return &t, nil
}

// Table returns a table by its id or, given a file id, the file's first
// table. The result is shared and must not be changed. Errors: not_found.
func (s *Store) Table(ctx context.Context, id string) (*catalog.Table, error) {
	if t, ok := s.tables.get(id); ok {
		return t, nil
	}
	t, err := s.readTable(ctx, id)
	if err != nil {
		return nil, err
	}
	s.tables.put(id, t)
	return t, nil
}

func (s *Store) forgetTables() { s.tables.clear(); s.tables.bump() }

func (s *Store) readTable(ctx context.Context, id string) (*catalog.Table, error) {
	t, err := scanTable(s.db.QueryRowContext(ctx, `SELECT id, file_id, name, ordinal, row_count, report, source_table_id, query, created_at, location FROM dd_tables
		WHERE id = ? OR (file_id = ? AND ordinal = 0 AND kind = 'sheet')`, id, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, datadesk.Errorf(datadesk.NotFound, "no table with id %q", id).WithField("file_id")
	}
	if err != nil {
		return nil, classify(ctx, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT key, label, type, identifier, reason, coalesce(digits, 0), coalesce(unit, '') FROM dd_columns
		WHERE table_id = ? ORDER BY ordinal`, t.ID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c catalog.Column
		var digits int
		if err := rows.Scan(&c.Key, &c.Label, &c.Type, &c.Identifier, &c.Reason, &digits, &c.Unit); err != nil {
			return nil, classify(ctx, err)
		}
		c.Digits = catalog.Digits(digits)
		t.Columns = append(t.Columns, c)
	}
	return t, rows.Err()
}

// DeleteFile removes a file, its tables, the views derived from them and its
// bytes. Errors: not_found.
func (s *Store) DeleteFile(ctx context.Context, id string) error {
	if _, err := s.File(ctx, id); err != nil {
		return err
	}
	all, err := s.allTablesOf(ctx, id)
	if err != nil {
		return err
	}
	remote := s.remoteTables(ctx, all)
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		if err := s.dropOrders(ctx, conn, all); err != nil {
			return err
		}
		for _, t := range all {
			if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS data.`+ducksql.Ident(t)); err != nil {
				return classify(ctx, err)
			}
			for _, q := range []string{`DELETE FROM dd_columns WHERE table_id = ?`, `DELETE FROM dd_labels WHERE table_id = ?`, `DELETE FROM dd_views WHERE table_id = ?`} {
				if _, err := conn.ExecContext(ctx, q, t); err != nil {
					return classify(ctx, err)
				}
			}
		}
		for _, q := range []string{`DELETE FROM dd_tables WHERE file_id = ?`, `DELETE FROM dd_files WHERE id = ?`} {
			if _, err := conn.ExecContext(ctx, q, id); err != nil {
				return classify(ctx, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.forgetTables()
	s.dropRemote(ctx, remote)
	if err := os.Remove(s.BytesPath(id)); err != nil && !os.IsNotExist(err) {
		s.logger.Error("remove bytes", "file", id, "err", err)
	}
	return nil
}

// allTablesOf returns the ids of every table of a file, views included.
func (s *Store) allTablesOf(ctx context.Context, fileID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM dd_tables WHERE file_id = ?`, fileID)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, classify(ctx, err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Open opens a file's original bytes. Errors: not_found.
func (s *Store) Open(ctx context.Context, id string) (*catalog.File, *os.File, error) {
	f, err := s.File(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	fh, err := os.Open(s.BytesPath(id))
	if err != nil {
		return nil, nil, fmt.Errorf("engine: open bytes of %s: %w", id, err)
	}
	return f, fh, nil
}
