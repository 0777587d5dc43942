package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"datadesk"
)

// lockDir takes the data directory for this process, so that no second
// server or command, in this process or another, opens the same owners'
// databases: DuckDB's own file locks hold between processes only, and an
// owner's database is attached only while in use. The lock goes with the
// process.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "datadesk.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another process"
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				who = "process " + pid
			}
			return nil, datadesk.Errorf(datadesk.Conflict, "the data directory %s is in use by %s; stop it first or use another --data", dir, who)
		}
		return nil, fmt.Errorf("engine: lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// DirInUse reports, as Conflict, that a process holds the data directory
// dir, without making anything in it: a directory or lock file that does
// not exist is held by no one. Errors: conflict.
func DirInUse(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "datadesk.lock"), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return datadesk.Errorf(datadesk.Conflict, "the data directory %s is in use by another process; stop it first or use another --data", dir)
		}
		return fmt.Errorf("engine: lock %s: %w", dir, err)
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
