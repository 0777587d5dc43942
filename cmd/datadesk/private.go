package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// privateFiles makes every file and folder this process creates readable
// by its own user alone (0600 and 0700): the data directory holds owners'
// tables, users' password hashes and the arguments of calls waiting for
// approval, and DuckDB creates its files (system.duckdb, each owner's
// database and their write-ahead logs) with the mode the umask leaves.
func privateFiles() { syscall.Umask(0o077) }

// tighten takes group and other permissions off everything under dirs,
// for files written before the server kept them private. A folder that is
// not there is skipped.
func tighten(dirs ...string) error {
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if mode := info.Mode().Perm(); mode&0o077 != 0 {
				if err := os.Chmod(path, mode&^0o077); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
