package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"datadesk"
	"datadesk/engine/catalog"
)

// What one owner may keep, so that no owner fills a node's disk or makes
// its own lists slow: at most MaxFiles files and MaxViews saved views, and
// its files' bytes (each file counted whole, even one whose bytes it
// shares with the file it was read again from) with its database at most
// Config.MaxOwnerBytes. Past them, a new file or view is refused
// (too_large) until some are deleted.
const (
	MaxFiles = 2000
	MaxViews = 200
)

// rowQuerier is a database or one of its connections.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// room says whether the owner may keep one more file of size bytes, or,
// for a stored view (file false), whether its storage is under its limit.
// Errors: too_large.
func (s *Store) room(ctx context.Context, q rowQuerier, file bool, size int64) error {
	var files, bytes int64
	if err := q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size), 0) FROM dd_files`).Scan(&files, &bytes); err != nil {
		return classify(ctx, err)
	}
	if file && files >= MaxFiles {
		return datadesk.Errorf(datadesk.TooLarge, "you keep %d files, the most allowed; delete some to store more", files)
	}
	bytes += s.databaseBytes() + size
	if bytes > s.maxBytes {
		return datadesk.Errorf(datadesk.TooLarge, "what you keep would come to %d MiB, past your limit of %d MiB; delete some files first",
			bytes>>20, s.maxBytes>>20)
	}
	return nil
}

// databaseBytes is the size of the owner's database and its log.
func (s *Store) databaseBytes() int64 {
	var n int64
	for _, name := range []string{"owner.duckdb", "owner.duckdb.wal"} {
		if fi, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// ShareBytes gives the stored bytes of file id a second name in the
// owner's incoming folder, for the file to be read again as a new file
// without a copy: the new file and the old share the bytes on disk, and
// either may be deleted without the other. Where the disk cannot give a
// file two names, the bytes are copied. Errors: not_found, too_large (the
// owner's storage limit).
func (s *Store) ShareBytes(ctx context.Context, id string) (*catalog.File, string, error) {
	f, err := s.File(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if err := s.room(ctx, s.db, true, f.Size); err != nil {
		return nil, "", err
	}
	path := filepath.Join(s.IncomingDir(), "reread-"+datadesk.NewID("b"))
	if err := os.Link(s.BytesPath(id), path); err != nil {
		if err := copyBytes(s.BytesPath(id), path); err != nil {
			os.Remove(path)
			if NoSpace(err) {
				return nil, "", NoSpaceError(err)
			}
			return nil, "", fmt.Errorf("engine: share bytes of %s: %w", id, err)
		}
	}
	return f, path, nil
}

// copyBytes copies the file at from to a new file at to.
func copyBytes(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Close())
}
