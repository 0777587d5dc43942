package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"datadesk"
	"datadesk/backup"
	"datadesk/engine"
	"datadesk/serverdb"
)

// backupCommand writes a backup of a data directory into DIR: by the
// server that holds it, through its control socket, so that it goes on
// serving; or, with no server running, by opening the directory here.
func backupCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	ef := addEngineFlags(fs)
	shared := fs.String("shared", envOr("DATADESK_SHARED", ""), "the cluster's shared directory (a node's users, policy and keys); empty: the data directory")
	pos, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 2 && pos[0] == "verify" {
		path, err := backup.Verify(pos[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "backup %s is complete and whole\n", path)
		return err
	}
	if len(pos) != 1 {
		return errors.New("backup: want DIR, the folder that keeps the backups (or verify DIR)")
	}
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	eng, err := engine.New(ef.config(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	var path string
	switch {
	case datadesk.ErrorCode(err) == datadesk.Conflict:
		var a backupAnswer
		if err := askServer(*ef.data, "/backup", backupRequest{Dir: dir}, &a); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		path = a.Path
	case err != nil:
		return err
	default:
		defer eng.Close()
		ctx := context.Background()
		system, err := serverdb.Open(ctx, *ef.data)
		if err != nil {
			return err
		}
		defer system.Close()
		sh := *shared
		if sh == "" {
			sh = *ef.data
		}
		if path, err = backup.Make(ctx, backup.Sources{Data: *ef.data, Shared: sh, Engine: eng, System: system}, dir); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(stdout, "backup written to %s\n", path)
	return err
}

// restoreCommand copies a backup into an empty data directory.
func restoreCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	data := fs.String("data", envOr("DATADESK_DATA", "./data"), "the data directory to restore into (empty, no server running)")
	shared := fs.String("shared", envOr("DATADESK_SHARED", ""), "where a node's users, policy and keys go")
	pos, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("restore: want FROM, a backup or the folder that keeps them")
	}
	// A server running on the directory holds its lock: refuse before
	// copying anything under it, and without making anything there.
	if err := engine.DirInUse(*data); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	path, err := backup.Restore(pos[0], *data, *shared)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "restored %s into %s\n", path, *data)
	return err
}
