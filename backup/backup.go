// Package backup makes consistent copies of a data directory while the
// server runs, and restores the newest complete one. A backup is a folder
// named by its UTC time inside the backups directory, holding a copy of
// the data directory (each owner's database and stored files, the server
// database with the arguments of waiting calls, the audit log) and of the
// shared files (users, policy, keys, the member list in force), and a
// manifest written last, with every file's SHA-256: a backup is complete
// when its manifest is there, and Verify checks it is still whole. One is written under a
// ".partial-" name and renamed when complete, so a backup cut short by a
// crash is never taken for one.
package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"datadesk"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/serverdb"
)

// Sources are what a backup copies from.
type Sources struct {
	// Data is the data directory; Shared the directory of users, policy
	// and keys (the data directory itself when the server is alone).
	Data   string
	Shared string
	Engine *engine.Engine
	System *serverdb.DB
}

// Manifest says what a complete backup holds.
type Manifest struct {
	Created time.Time `json:"created"`
	Owners  []string  `json:"owners"`
	// Shared says whether the shared files are in shared/ (a node of a
	// cluster) or in data/ (a server alone).
	Shared bool `json:"shared"`
	// Files are the backup's files, by path inside it, with their SHA-256
	// in hex. Backups made before it was kept have none.
	Files map[string]string `json:"files,omitempty"`
}

const (
	manifestName  = "manifest.json"
	partialPrefix = ".partial-"
	stampLayout   = "20060102T150405.000000000Z"
)

// sharedFiles are the files of the shared directory a backup keeps: the
// member list in force after a change of members (cluster.PlacementFile)
// is the one record of them.
var sharedFiles = []string{"users.json", "signing.key", "cluster.key", cluster.PlacementFile}

// Make writes a backup of src into dir and returns its path. The owners
// are copied one at a time, each consistent (its catalog changes wait
// while it is copied, a bounded pause); calls go on meanwhile. A backup
// that fails leaves nothing in dir. Errors: unavailable when dir's disk
// is full.
func Make(ctx context.Context, src Sources, dir string) (string, error) {
	created := time.Now().UTC()
	stamp := created.Format(stampLayout)
	tmp := filepath.Join(dir, partialPrefix+stamp)
	err := write(ctx, src, tmp, created)
	if err == nil {
		final := filepath.Join(dir, stamp)
		if err = os.Rename(tmp, final); err == nil {
			return final, nil
		}
		err = fmt.Errorf("backup: %w", err)
	}
	_ = os.RemoveAll(tmp)
	if engine.NoSpace(err) {
		return "", datadesk.Errorf(datadesk.Unavailable, "the disk that holds %s is full: the backup was not written, and what it had copied is removed; free space there and run it again", dir).WithCause(err)
	}
	return "", err
}

// write writes a backup of src into tmp, its manifest last.
func write(ctx context.Context, src Sources, tmp string, created time.Time) error {
	data := filepath.Join(tmp, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	owners, err := src.Engine.Owners()
	if err != nil {
		return err
	}
	for _, o := range owners {
		if err := src.Engine.BackupOwner(ctx, o, filepath.Join(data, "owners", o)); err != nil {
			return fmt.Errorf("backup of owner %s: %w", o, err)
		}
	}
	if err := src.System.Backup(ctx, filepath.Join(data, "system.duckdb"), filepath.Join(data, "approvals")); err != nil {
		return err
	}
	if err := copyIfThere(filepath.Join(src.Data, "audit.jsonl"), filepath.Join(data, "audit.jsonl")); err != nil {
		return err
	}
	shared := src.Shared != "" && src.Shared != src.Data
	sharedDst, sharedSrc := data, src.Data
	if shared {
		sharedDst, sharedSrc = filepath.Join(tmp, "shared"), src.Shared
	}
	if err := copyShared(sharedSrc, sharedDst); err != nil {
		return err
	}
	files, err := sums(tmp)
	if err != nil {
		return err
	}
	m := Manifest{Created: created, Owners: owners, Shared: shared, Files: files}
	b, _ := json.MarshalIndent(m, "", "  ")
	return writeSynced(filepath.Join(tmp, manifestName), b)
}

// copyShared copies users, keys and the policy folder.
func copyShared(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	for _, name := range sharedFiles {
		if err := copyIfThere(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return engine.CopyTree(filepath.Join(src, "policy"), filepath.Join(dst, "policy"))
}

func copyIfThere(src, dst string) error {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	}
	return engine.CopyFile(src, dst)
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("backup: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("backup: %w", err)
	}
	return f.Close()
}

// Latest returns the newest complete backup in dir. Errors: not_found.
func Latest(dir string) (string, *Manifest, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, datadesk.Errorf(datadesk.NotFound, "no backups in %s: %v", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), partialPrefix) {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names {
		if m, err := readManifest(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n), m, nil
		}
	}
	return "", nil, datadesk.Errorf(datadesk.NotFound, "no complete backup in %s", dir)
}

func readManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(path, manifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// sums is the SHA-256 of each file under dir, by slash path inside it.
func sums(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		sum, err := fileSum(path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return out, nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Verify checks that a backup is complete and whole: its manifest is
// there and every file it lists is there with the same SHA-256, and no
// file was added. It returns the backup's path (from may be a folder of
// backups: its newest complete one). Errors: not_found (no complete
// backup), invalid (naming what is missing, changed or added).
func Verify(from string) (string, error) {
	path, m, err := resolve(from)
	if err != nil {
		return "", err
	}
	if m.Files == nil {
		return path, datadesk.Errorf(datadesk.Invalid, "the backup at %s keeps no checksums (made by an older version); it cannot be verified", path)
	}
	found, err := sums(path)
	if err != nil {
		return path, err
	}
	delete(found, manifestName)
	var problems []string
	for name, want := range m.Files {
		got, ok := found[name]
		switch {
		case !ok:
			problems = append(problems, name+" is missing")
		case got != want:
			problems = append(problems, name+" has changed")
		}
	}
	for name := range found {
		if _, ok := m.Files[name]; !ok {
			problems = append(problems, name+" was added")
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return path, datadesk.Errorf(datadesk.Invalid, "the backup at %s is not whole: %s", path, strings.Join(problems, "; "))
	}
	return path, nil
}

// Restore copies a backup into an empty data directory (and, for a node,
// its shared files into shared). from is a backup, or a directory of
// backups whose newest complete one is taken. Errors: not_found (no
// complete backup), conflict (data already holds owners).
func Restore(from, data, shared string) (string, error) {
	path, m, err := resolve(from)
	if err != nil {
		return "", err
	}
	if m.Files != nil {
		if _, err := Verify(path); err != nil {
			return "", err
		}
	}
	if owners, _ := os.ReadDir(filepath.Join(data, "owners")); len(owners) > 0 {
		return "", datadesk.Errorf(datadesk.Conflict, "%s already holds owners; restore into an empty data directory", data)
	}
	if m.Shared && shared == "" {
		return "", datadesk.Errorf(datadesk.Invalid, "the backup is a node's: give --shared for its users, policy and keys")
	}
	// Every check is made before the first write; a copy that fails takes
	// back what it wrote.
	undoData, undoShared := undoer(data), undoer(shared)
	if err := engine.CopyTree(filepath.Join(path, "data"), data); err != nil {
		undoData()
		return "", err
	}
	if m.Shared {
		if err := engine.CopyTree(filepath.Join(path, "shared"), shared); err != nil {
			undoData()
			undoShared()
			return "", err
		}
	}
	return path, nil
}

// undoer returns what removes everything a restore adds to dir: dir
// itself when it did not exist, else the entries it did not hold.
func undoer(dir string) func() {
	if dir == "" {
		return func() {}
	}
	before, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return func() { _ = os.RemoveAll(dir) }
	}
	held := map[string]bool{}
	for _, e := range before {
		held[e.Name()] = true
	}
	return func() {
		after, _ := os.ReadDir(dir)
		for _, e := range after {
			if !held[e.Name()] {
				_ = os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// resolve reads a backup path, or finds the newest in a directory of them.
func resolve(from string) (string, *Manifest, error) {
	if m, err := readManifest(from); err == nil {
		return from, m, nil
	}
	return Latest(from)
}
