// Package handoff moves one owner from one node to another while both
// serve: the owner is withheld on the node it leaves (new calls answer
// 503, running ones finish, its database is closed), its folder (database
// and stored files) and what the server's database holds of it (web
// sessions, calls waiting for approval and their history) travel as one
// tar stream, and the node it joins writes them aside, checks the stream
// is whole, and puts them in place at once.
package handoff

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"datadesk"
	"datadesk/engine"
)

// Records is what a server keeps of an owner beside the owner's folder
// (web sessions, calls waiting for approval and their history), carried
// as bytes that the same kind of store reads back.
type Records interface {
	// Export returns owner's records and how many there are of each.
	Export(ctx context.Context, owner string) ([]byte, Counts, error)
	// Import stores records Export made, all or none, refusing any of
	// another owner. Errors: invalid.
	Import(ctx context.Context, owner string, b []byte) (Counts, error)
}

// Counts says how many records an owner has.
type Counts struct {
	Sessions  int
	Approvals int
	// Pending are the approvals that wait for a decision.
	Pending int
}

// The stream's entries: the owner's folder under folderPrefix, then the
// records, then the end, which counts what came before it. A stream
// without its end is refused whole.
const (
	folderPrefix = "folder/"
	recordsEntry = "records.json"
	endEntry     = "end.json"
	// maxRecords bounds the records entry: sessions and approvals,
	// whose arguments a user's pending quota bounds.
	maxRecords = 512 << 20
)

// Summary says what moved.
type Summary struct {
	Files     int   `json:"files"`
	Bytes     int64 `json:"bytes"`
	Sessions  int   `json:"sessions"`
	Approvals int   `json:"approvals"`
	Pending   int   `json:"pending"`
}

type end struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Send writes the move stream of owner, whom the caller has withheld on
// this node (eng.Withhold), to w. The owner stays withheld whatever
// happens: the caller puts it back in service (eng.Admit) when the move is
// given up, or drops it once the other node holds it.
func Send(ctx context.Context, w io.Writer, eng *engine.Engine, recs Records, owner string) (Summary, error) {
	var sum Summary
	tw := tar.NewWriter(w)
	dir := eng.OwnerDir(owner)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipDir // an owner with nothing stored yet
			}
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		return sendEntry(tw, p, folderPrefix+filepath.ToSlash(rel), d, &sum)
	})
	if err != nil {
		return sum, fmt.Errorf("handoff: the folder of %s: %w", owner, err)
	}
	rec, n, err := recs.Export(ctx, owner)
	if err != nil {
		return sum, err
	}
	sum.Sessions, sum.Approvals, sum.Pending = n.Sessions, n.Approvals, n.Pending
	if err := writeEntry(tw, recordsEntry, rec); err != nil {
		return sum, err
	}
	if err := writeJSON(tw, endEntry, end{Files: sum.Files, Bytes: sum.Bytes}); err != nil {
		return sum, err
	}
	return sum, tw.Close()
}

// sendEntry writes one file or folder of the owner's folder.
func sendEntry(tw *tar.Writer, p, name string, d fs.DirEntry, sum *Summary) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.IsDir():
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o700, ModTime: info.ModTime()})
	case !info.Mode().IsRegular():
		return nil // the engine keeps no links or devices
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: info.Size(), ModTime: info.ModTime()}); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err != nil {
		return err
	}
	if n != info.Size() {
		return fmt.Errorf("%s changed while it was sent", name)
	}
	sum.Files++
	sum.Bytes += n
	return nil
}

func writeJSON(tw *tar.Writer, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeEntry(tw, name, b)
}

func writeEntry(tw *tar.Writer, name string, b []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(b))}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
}

// Receive reads owner's move stream from r and puts the owner in service
// on this node: its folder replaces any this node had, and its records
// join the server's. A stream cut short, or one whose end does not count
// what came, changes nothing. Errors: invalid (a stream that does not read
// or is not whole, records of another owner).
func Receive(ctx context.Context, r io.Reader, eng *engine.Engine, recs Records, owner string) (Summary, error) {
	var sum Summary
	if err := eng.Withhold(ctx, owner); err != nil {
		return sum, err
	}
	defer eng.Admit(owner)
	staged, err := eng.StageOwner(owner)
	if err != nil {
		return sum, err
	}
	defer os.RemoveAll(staged)
	rec, err := readStream(r, staged, &sum)
	if err != nil {
		return sum, err
	}
	if err := eng.InstallOwner(owner, staged); err != nil {
		return sum, err
	}
	n, err := recs.Import(ctx, owner, rec)
	if err != nil {
		// The owner is not this node's yet: its folder goes with the
		// records that did not come.
		return sum, errors.Join(err, eng.DropOwner(owner))
	}
	sum.Sessions, sum.Approvals, sum.Pending = n.Sessions, n.Approvals, n.Pending
	return sum, nil
}

// readStream writes the stream's folder under staged and returns its
// records, once the end is read and agrees.
func readStream(r io.Reader, staged string, sum *Summary) ([]byte, error) {
	notWhole := func(format string, args ...any) error {
		return datadesk.Errorf(datadesk.Invalid, "the move stream is not whole: "+format, args...)
	}
	tr := tar.NewReader(r)
	var rec []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, notWhole("it ended before its last entry")
		}
		if err != nil {
			return nil, notWhole("%v", err)
		}
		switch name := h.Name; {
		case strings.HasPrefix(name, folderPrefix):
			if err := receiveEntry(tr, h, staged, strings.TrimPrefix(name, folderPrefix), sum); err != nil {
				return nil, notWhole("%s: %v", name, err)
			}
		case name == recordsEntry:
			if h.Size > maxRecords {
				return nil, notWhole("records of %d bytes, more than %d", h.Size, maxRecords)
			}
			if rec, err = io.ReadAll(tr); err != nil {
				return nil, notWhole("the records: %v", err)
			}
		case name == endEntry:
			var e end
			if err := json.NewDecoder(io.LimitReader(tr, 1<<10)).Decode(&e); err != nil {
				return nil, notWhole("its end does not read: %v", err)
			}
			if rec == nil || e.Files != sum.Files || e.Bytes != sum.Bytes {
				return nil, notWhole("it counts %d files of %d bytes, %d of %d came", e.Files, e.Bytes, sum.Files, sum.Bytes)
			}
			if _, err := tr.Next(); !errors.Is(err, io.EOF) {
				return nil, notWhole("something follows its end (%v)", err)
			}
			return rec, nil
		default:
			return nil, notWhole("unknown entry %q", name)
		}
	}
}

// receiveEntry writes one file or folder under staged.
func receiveEntry(tr *tar.Reader, h *tar.Header, staged, rel string, sum *Summary) error {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" || !filepath.IsLocal(rel) || path.Clean(rel) != rel {
		return fmt.Errorf("a path outside the owner's folder")
	}
	p := filepath.Join(staged, filepath.FromSlash(rel))
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(p, 0o700)
	case tar.TypeReg:
	default:
		return fmt.Errorf("neither a file nor a folder")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, tr)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if !h.ModTime.IsZero() {
		_ = os.Chtimes(p, h.ModTime, h.ModTime)
	}
	sum.Files++
	sum.Bytes += n
	return nil
}
