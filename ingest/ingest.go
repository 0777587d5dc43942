// Package ingest reads uploaded files into tables: it recognises the format
// from the bytes (not only the name), decodes text, finds the header, and
// streams rows to the engine, which decides the column types from every value.
//
// Spreadsheet cells reach the engine with their kind (number, date,
// date-time, time of day, boolean, error, text) beside their text, so that
// a column's type follows what its cells are. XLS (BIFF5/BIFF8) is read by
// the reader in biff.go, which bounds every count and length it reads.
package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"datadesk"
	"datadesk/engine"
)

// Defaults for Config fields left zero.
const (
	// DefaultMaxUnzipSize bounds what a workbook may expand to.
	DefaultMaxUnzipSize = 1 << 30
	// DefaultMaxUnzipRatio refuses archives that expand more than this many
	// times their size: worksheet XML compresses 5 to 30 times, zip bombs
	// thousands of times.
	DefaultMaxUnzipRatio = 200
	// DefaultMaxLine bounds a CSV line, so one huge field cannot take the
	// server's memory.
	DefaultMaxLine = 16 << 20
	// DefaultMaxCells bounds the cells read from one upload's sheets.
	DefaultMaxCells = 50_000_000
	// sniffSize is how much of a file format detection and dialect sniffing
	// look at.
	sniffSize = 64 << 10
)

// Config configures an Ingester.
type Config struct {
	MaxUnzipSize  int64
	MaxUnzipRatio int64
	MaxLine       int
	MaxCells      int64
	// MaxReadMemory bounds the memory every upload's readers hold at once
	// beside their rows (memory.go); 0 means DefaultMaxReadMemory.
	MaxReadMemory int64
	// Literal reads each sheet as it is: its first row with a value is
	// the header, and every row under it is data; without it, titles and
	// notes around a sheet's table are found and kept out (header.go).
	Literal bool
}

func (c *Config) setDefaults() {
	if c.MaxUnzipSize <= 0 {
		c.MaxUnzipSize = DefaultMaxUnzipSize
	}
	if c.MaxUnzipRatio <= 0 {
		c.MaxUnzipRatio = DefaultMaxUnzipRatio
	}
	if c.MaxLine <= 0 {
		c.MaxLine = DefaultMaxLine
	}
	if c.MaxCells <= 0 {
		c.MaxCells = DefaultMaxCells
	}
	if c.MaxReadMemory <= 0 {
		c.MaxReadMemory = DefaultMaxReadMemory
	}
}

// Ingester reads files into table sources.
type Ingester struct {
	cfg  Config
	opts Options
	// memory is what every upload's readers hold at once.
	memory *readMemory
}

// headerFor is how the tables of sheet (or of a CSV file, sheet "") are
// found: under the header rows asked for, or found unless the ingester
// reads literally; with the rows asked kept out.
func (in *Ingester) headerFor(sheet string) headerChoice {
	o := in.opts
	if o.Sheet != "" && datadesk.CleanName(o.Sheet) != datadesk.CleanName(sheet) {
		return headerChoice{find: !in.cfg.Literal}
	}
	ch := headerChoice{find: !in.cfg.Literal && len(o.HeaderRows) == 0, rows: o.HeaderRows}
	if !o.Zero() {
		ch.said = o.String()
	}
	if len(o.SkipRows) > 0 {
		ch.skip = map[int]bool{}
		for _, r := range o.SkipRows {
			ch.skip[r] = true
		}
	}
	return ch
}

// headerChoice says how a sheet's tables are found: under the header
// rows asked for (rows, from 1), else found (find), else the first row
// with a value is the header of one table; skip are rows kept out.
type headerChoice struct {
	find bool
	rows []int
	skip map[int]bool
	// said is the options as words, for the tables they apply to.
	said string
}

// asked reports whether a person named the header rows.
func (h headerChoice) asked() bool { return len(h.rows) > 0 }

// last is the last row of the window the choice needs: the last header
// row asked for, else 0 (the window's own bound).
func (h headerChoice) last() int {
	if len(h.rows) > 0 {
		return h.rows[len(h.rows)-1]
	}
	return 0
}

// New returns an Ingester.
func New(cfg Config) *Ingester {
	cfg.setDefaults()
	return &Ingester{cfg: cfg, memory: newReadMemory(cfg.MaxReadMemory)}
}

// Result is what Read found in a file.
type Result struct {
	// Format is the detected format: csv, tsv, json, xlsx, xlsm, xls, or
	// plain for files stored without tables.
	Format      string
	ContentType string
	// Tables are the tables to ingest; empty for plain files.
	Tables []engine.TableSource
	// Close removes temporary files the sources read from; call it after
	// the sources are consumed.
	Close func()
}

var tabularExts = []string{".csv", ".tsv", ".tab", ".json", ".ndjson", ".jsonl", ".xlsx", ".xlsm", ".xls"}

// plainTypes are the other files people may upload: stored as they are.
var plainTypes = map[string]string{
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".pdf":  "application/pdf",
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".zip":  "application/zip",
}

// AllowedExtensions lists every extension an upload may have.
func AllowedExtensions() []string {
	out := slices.Clone(tabularExts)
	for k := range plainTypes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var (
	magicZip = []byte("PK\x03\x04")
	magicOLE = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
)

// Read recognises the format of the file at path (named filename by its
// uploader) and prepares its tables. tempDir is where a reader may keep
// temporary files.
// Errors: unsupported (format, encrypted workbook), invalid (corrupt or
// unreadable content), too_large (an archive that expands too far).
func (in *Ingester) Read(ctx context.Context, path, filename, tempDir string) (*Result, error) {
	return in.ReadWith(ctx, path, filename, tempDir, Options{})
}

// ReadWith is Read with a person's corrections. Errors: as Read, and
// invalid when the options name no row or sheet of the file.
func (in *Ingester) ReadWith(ctx context.Context, path, filename, tempDir string, opts Options) (*Result, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	with := *in
	with.opts = opts
	res, err := with.read(ctx, path, filename, tempDir)
	if err == nil && opts.Sheet != "" {
		found := false
		var names []string
		for _, t := range res.Tables {
			found = found || t.Sheet == datadesk.CleanName(opts.Sheet) || t.Sheet == opts.Sheet
			if len(names) == 0 || names[len(names)-1] != t.Sheet {
				names = append(names, t.Sheet)
			}
		}
		if !found {
			res.Close()
			return nil, datadesk.Errorf(datadesk.Invalid, "%s has no sheet %q with values", filename, opts.Sheet).WithField("sheet").WithAllowed(names...)
		}
	}
	return res, err
}

func (in *Ingester) read(ctx context.Context, path, filename, tempDir string) (*Result, error) {
	head, err := readHead(path, sniffSize)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	ext := strings.ToLower(filepath.Ext(filename))
	name := strings.TrimSuffix(filepath.Base(filename), filepath.Ext(filename))
	isZip, isOLE := bytes.HasPrefix(head, magicZip), bytes.HasPrefix(head, magicOLE)

	switch {
	case ext == ".xlsx" || ext == ".xlsm" || ext == ".xls" && isZip:
		if isOLE {
			if encrypted, _ := oleEncrypted(path); encrypted {
				return nil, errEncrypted(filename)
			}
			return in.readXLS(path, filename)
		}
		if !isZip {
			return nil, datadesk.Errorf(datadesk.Invalid, "%s is not a valid Excel workbook: it is not a zip archive", filename).WithField("file")
		}
		format := strings.TrimPrefix(ext, ".")
		if ext == ".xls" {
			format = "xlsx"
		}
		return in.readXLSX(ctx, path, filename, format)
	case ext == ".xls":
		if !isOLE {
			return nil, datadesk.Errorf(datadesk.Unsupported,
				"%s is not a binary Excel (BIFF) workbook; save it as .xlsx or .csv and upload again", filename).WithField("file")
		}
		if encrypted, _ := oleEncrypted(path); encrypted {
			return nil, errEncrypted(filename)
		}
		return in.readXLS(path, filename)
	case ext == ".csv" || ext == ".tsv" || ext == ".tab":
		if isZip || isOLE {
			return nil, datadesk.Errorf(datadesk.Invalid, "%s is a binary file, not CSV text", filename).WithField("file")
		}
		delim := rune(0)
		ct := "text/csv; charset=utf-8"
		format := "csv"
		if ext != ".csv" {
			delim, ct, format = '\t', "text/tab-separated-values; charset=utf-8", "tsv"
		}
		srcs, err := in.csvSources(path, name, delim, head)
		if err != nil {
			return nil, err
		}
		return &Result{Format: format, ContentType: ct, Tables: srcs, Close: func() {}}, nil
	case ext == ".json" || ext == ".ndjson" || ext == ".jsonl":
		src, err := in.jsonSource(path, name)
		if err != nil {
			return nil, err
		}
		return &Result{Format: "json", ContentType: "application/json", Tables: []engine.TableSource{src}, Close: func() {}}, nil
	}
	if ct, ok := plainTypes[ext]; ok {
		if err := checkPlain(ext, head); err != nil {
			return nil, datadesk.Errorf(datadesk.Invalid, "%s: %v", filename, err).WithField("file")
		}
		return &Result{Format: "plain", ContentType: ct, Close: func() {}}, nil
	}
	return nil, datadesk.Errorf(datadesk.Unsupported, "files of type %q cannot be uploaded", ext).
		WithField("file").WithAllowed(AllowedExtensions()...)
}

func errEncrypted(filename string) error {
	return datadesk.Errorf(datadesk.Unsupported,
		"%s is an encrypted (password-protected) workbook; remove the password and upload again", filename).WithField("file")
}

// checkPlain verifies that an image is the image its name says.
func checkPlain(ext string, head []byte) error {
	var magic [][]byte
	switch ext {
	case ".png":
		magic = [][]byte{[]byte("\x89PNG\r\n\x1a\n")}
	case ".jpg", ".jpeg":
		magic = [][]byte{{0xFF, 0xD8, 0xFF}}
	case ".gif":
		magic = [][]byte{[]byte("GIF87a"), []byte("GIF89a")}
	case ".webp":
		if len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" {
			return nil
		}
		return fmt.Errorf("not a WebP image")
	case ".pdf":
		magic = [][]byte{[]byte("%PDF-")}
	case ".docx", ".zip":
		magic = [][]byte{magicZip, []byte("PK\x05\x06")}
	default:
		return nil
	}
	for _, m := range magic {
		if bytes.HasPrefix(head, m) {
			return nil
		}
	}
	return fmt.Errorf("the content is not a %s file", strings.TrimPrefix(ext, "."))
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:m], nil
}
