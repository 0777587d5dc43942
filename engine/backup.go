package engine

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"datadesk/engine/ducksql"

	"datadesk"
)

// BackupOwner writes a consistent copy of an owner's database and stored
// files into dst (owner.duckdb and files/), while the server serves. The
// database is copied in one statement (COPY FROM DATABASE, a snapshot)
// and the files beside it, with the owner's catalog changes held for the
// while, so the copy's catalog and files agree. Tables on a remote backend
// are in the copy's catalog; their rows stay where they are.
func (e *Engine) BackupOwner(ctx context.Context, owner, dst string) error {
	s, release, err := e.Acquire(ctx, owner)
	if err != nil {
		return err
	}
	defer release()
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("engine: backup: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// The instance may write only under the owners' directory: the copy
	// is made there, then moved.
	name := datadesk.NewID("bk")
	tmp := filepath.Join(s.dir, name+".duckdb")
	defer os.Remove(tmp)
	conn, err := e.hub.ctl.Conn(ctx)
	if err != nil {
		return classify(ctx, err)
	}
	defer conn.Close()
	for _, stmt := range []string{
		`ATTACH ` + ducksql.Literal(tmp) + ` AS ` + ducksql.Ident(name) + attachOptions,
		`COPY FROM DATABASE ` + ducksql.Ident(owner) + ` TO ` + ducksql.Ident(name),
		`DETACH ` + ducksql.Ident(name),
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `DETACH DATABASE IF EXISTS `+ducksql.Ident(name))
			return classify(ctx, err)
		}
	}
	if err := CopyFile(tmp, filepath.Join(dst, "owner.duckdb")); err != nil {
		return err
	}
	return CopyTree(filepath.Join(s.dir, "files"), filepath.Join(dst, "files"))
}

// Owners lists the owners that have a database in the data directory.
func (e *Engine) Owners() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(e.cfg.Dir, "owners"))
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	var out []string
	for _, d := range entries {
		// Dot folders are owners' folders on their way in or out.
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, d.Name())
		}
	}
	return out, nil
}

// CopyFile copies a file's bytes to dst, synced, replacing dst.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// CopyTree copies a directory's files and folders to dst; a missing src
// copies nothing.
func CopyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == src {
				return fs.SkipAll
			}
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return CopyFile(p, target)
	})
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}
