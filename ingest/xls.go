package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/extrame/xls"
	xlsreader "github.com/shakinm/xlsReader/xls"

	"datadesk"
)

// maxXLSOutput bounds what the XLS child may print: a BIFF8 sheet has at
// most 65,536 rows of 256 columns, and an upload is bounded anyway.
const maxXLSOutput = 1 << 30

// maxXLSColumns is how many columns a BIFF8 sheet has.
const maxXLSColumns = 256

// xlsLine is one line the child prints: the start of a sheet, a row, or an
// error that ends the output.
type xlsLine struct {
	Sheet string   `json:"s,omitempty"`
	Row   []string `json:"r,omitempty"`
	Err   string   `json:"e,omitempty"`
	// Formulas counts the workbook's formula cells, first thing printed.
	Formulas int `json:"f,omitempty"`
}

// oleEncrypted reports whether an OLE compound file is password protected:
// an encrypted OOXML package (EncryptionInfo stream) or a BIFF workbook whose
// globals carry a FILEPASS record.
func oleEncrypted(path string) (bool, error) {
	// The globals, where FILEPASS sits, are at the stream's start.
	encrypted, wb, err := readOLE(path, 1<<20)
	return encrypted || biffHasFilePass(wb), err
}

// maxBIFFScan bounds how much of a workbook stream is read.
const maxBIFFScan = 256 << 20

func biffHasFilePass(b []byte) bool {
	const (
		recEOF      = 0x000A
		recFilePass = 0x002F
	)
	for len(b) >= 4 {
		typ := binary.LittleEndian.Uint16(b)
		n := int(binary.LittleEndian.Uint16(b[2:]))
		if typ == recFilePass {
			return true
		}
		if typ == recEOF {
			return false
		}
		if 4+n > len(b) {
			return false
		}
		b = b[4+n:]
	}
	return false
}

// readXLS runs the XLS reader in a child process and keeps each sheet it
// prints as a CSV file in tempDir, read like any CSV upload.
func (in *Ingester) readXLS(ctx context.Context, path, filename, tempDir string) (*Result, error) {
	if len(in.cfg.XLSCommand) == 0 {
		return nil, datadesk.Errorf(datadesk.Unsupported, "XLS files cannot be read by this server; save as .xlsx").WithField("file")
	}
	ctx, cancel := context.WithTimeout(ctx, in.cfg.XLSTimeout)
	defer cancel()
	args := append(append([]string(nil), in.cfg.XLSCommand[1:]...), path)
	cmd := exec.CommandContext(ctx, in.cfg.XLSCommand[0], args...)
	cmd.Env = append(os.Environ(), "DATADESK_XLS_WORKER=1")
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 64 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ingest: start XLS reader: %w", err)
	}

	var (
		files    []string
		names    []string
		w        *csv.Writer
		fh       *os.File
		childEr  string
		width    int
		formulas int
	)
	cleanup := func() {
		for _, p := range files {
			_ = os.Remove(p)
		}
	}
	closeSheet := func() error {
		if fh == nil {
			return nil
		}
		w.Flush()
		err := errors.Join(w.Error(), fh.Close())
		fh = nil
		return err
	}
	sc := bufio.NewScanner(io.LimitReader(out, maxXLSOutput))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var readErr error
	for sc.Scan() {
		var l xlsLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			readErr = err
			break
		}
		switch {
		case l.Formulas > 0:
			formulas = l.Formulas
		case l.Err != "":
			childEr = l.Err
		case l.Row != nil:
			if fh == nil {
				continue
			}
			width = max(width, len(l.Row))
			if err := w.Write(l.Row); err != nil {
				readErr = err
			}
		default:
			if err := closeSheet(); err != nil {
				readErr = err
				break
			}
			p := filepath.Join(tempDir, datadesk.NewID("xls")+".csv")
			if fh, err = os.Create(p); err != nil {
				readErr = err
				break
			}
			files = append(files, p)
			names = append(names, l.Sheet)
			w = csv.NewWriter(fh)
		}
		if readErr != nil {
			break
		}
	}
	if readErr == nil {
		readErr = sc.Err()
	}
	readErr = errors.Join(readErr, closeSheet())
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		cleanup()
		return nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read within %s: the workbook is damaged or too complex", filename, in.cfg.XLSTimeout).WithField("file")
	case childEr != "":
		cleanup()
		return nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read: %s", filename, childEr).WithField("file")
	case waitErr != nil || readErr != nil:
		cleanup()
		return nil, datadesk.Errorf(datadesk.Invalid, "%s could not be read: the XLS reader failed on it (a damaged workbook, or features it does not support); save it as .xlsx and upload again", filename).WithField("file").
			WithCause(fmt.Errorf("xls reader: %v %v: %s", waitErr, readErr, stderr.String()))
	}
	res := &Result{Format: "xls", ContentType: "application/vnd.ms-excel", Close: cleanup}
	for i, p := range files {
		st, err := os.Stat(p)
		if err != nil || st.Size() == 0 {
			continue
		}
		head, err := readHead(p, sniffSize)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("ingest: %w", err)
		}
		src, err := in.csvSource(p, names[i], ',', head)
		if err != nil {
			cleanup()
			return nil, err
		}
		src.Name = names[i]
		src.Notes = nil
		if formulas > 0 {
			src.Notes = []string{fmt.Sprintf("the workbook has %d formula cells; their values are the results Excel last saved", formulas)}
		}
		res.Tables = append(res.Tables, src)
	}
	if len(res.Tables) == 0 {
		cleanup()
		return nil, datadesk.Errorf(datadesk.Invalid, "%s has no sheet with data", filename).WithField("file")
	}
	return res, nil
}

type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// RunXLSWorker reads the XLS file at path and prints its sheets to w, one
// JSON line per sheet start and per non-empty row, for the parent process.
// It is meant to run in a child process: the BIFF readers it uses may panic
// or hang on malformed files, and that must not reach the server. The first
// reader is tried, then the second if the first fails.
func RunXLSWorker(path string, w io.Writer) error {
	// Neither reader reads formula results; they come from the FORMULA
	// records, read once here.
	var results []map[cellPos]string
	formulas := 0
	if stream, err := workbookStream(path); err == nil {
		results, formulas = formulaResults(stream)
	}
	if formulas > 0 {
		if err := json.NewEncoder(w).Encode(xlsLine{Formulas: formulas}); err != nil {
			return err
		}
	}
	// Both readers run; the one that finds more values wins, the first on a
	// tie (it renders date cells as dates). Each reads different corners of
	// the format, and neither reads every file of the test corpus.
	var best []byte
	bestCells := -1
	extrame := func(path string, emit func(xlsLine) error) error { return extrameSheets(path, results, emit) }
	for _, read := range []func(string, func(xlsLine) error) error{extrame, shakinmSheets} {
		var buf bytes.Buffer
		cells := 0
		done := make(chan error, 1)
		go func() {
			enc := json.NewEncoder(&buf)
			done <- readXLSWith(path, func(l xlsLine) error {
				for _, c := range l.Row {
					if c != "" {
						cells++
					}
				}
				return enc.Encode(l)
			}, read)
		}()
		select {
		case err := <-done:
			if err == nil && cells > bestCells {
				best, bestCells = buf.Bytes(), cells
			}
		case <-time.After(xlsReaderTimeout):
			// A reader that loops on a malformed file is abandoned; the
			// process exits when the caller returns.
		}
	}
	if best == nil {
		return json.NewEncoder(w).Encode(xlsLine{Err: "the XLS reader failed on it (a damaged workbook, or features it does not support); save it as .xlsx and upload again"})
	}
	_, err := w.Write(best)
	return err
}

// xlsReaderTimeout bounds each reader in the child; a BIFF8 workbook of the
// largest size reads in well under a second.
const xlsReaderTimeout = 5 * time.Second

func readXLSWith(path string, emit func(xlsLine) error, read func(string, func(xlsLine) error) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return read(path, emit)
}

// extrameSheets reads the sheets with one reader; results are the formula
// results per sheet, for the cells the reader leaves empty.
func extrameSheets(path string, results []map[cellPos]string, emit func(xlsLine) error) error {
	wb, err := xls.Open(path, "utf-8")
	if err != nil {
		return err
	}
	for i := 0; i < wb.NumSheets(); i++ {
		s := wb.GetSheet(i)
		if s == nil {
			continue
		}
		if err := emit(xlsLine{Sheet: s.Name}); err != nil {
			return err
		}
		byRow := map[int]map[int]string{}
		last := int(s.MaxRow) + 1
		if i < len(results) {
			for at, v := range results[i] {
				if at.col >= maxXLSColumns {
					continue
				}
				if byRow[at.row] == nil {
					byRow[at.row] = map[int]string{}
				}
				byRow[at.row][at.col] = v
				last = max(last, at.row)
			}
		}
		for r := 0; r <= last; r++ {
			row := extrameRow(s, r)
			var cells []string
			if row != nil {
				for c := 0; c < row.LastCol(); c++ {
					cells = append(cells, extrameCell(row.Col(c)))
				}
			}
			for col, v := range byRow[r] {
				for len(cells) <= col {
					cells = append(cells, "")
				}
				if cells[col] == "" {
					cells[col] = v
				}
			}
			if !emptyRow(cells) {
				if err := emit(xlsLine{Row: cells}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// extrameRow returns row r, or nil where the sheet has none (the reader
// panics on a missing row).
func extrameRow(s *xls.WorkSheet, r int) (row *xls.Row) {
	defer func() {
		if recover() != nil {
			row = nil
		}
	}()
	return s.Row(r)
}

// extrameCell turns the reader's RFC 3339 rendering of date cells into ISO
// dates, or dates and times, that type inference recognises.
func extrameCell(v string) string {
	if len(v) == 20 && v[4] == '-' && v[10] == 'T' && v[19] == 'Z' {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
				return t.Format("2006-01-02")
			}
			return t.Format("2006-01-02 15:04:05")
		}
	}
	return v
}

func shakinmSheets(path string, emit func(xlsLine) error) error {
	wb, err := xlsreader.OpenFile(path)
	if err != nil {
		return err
	}
	for i := 0; i < wb.GetNumberSheets(); i++ {
		s, err := wb.GetSheet(i)
		if err != nil {
			return err
		}
		if err := emit(xlsLine{Sheet: s.GetName()}); err != nil {
			return err
		}
		for _, row := range s.GetRows() {
			var cells []string
			for _, c := range row.GetCols() {
				cells = append(cells, strings.TrimSpace(c.GetString()))
			}
			if !emptyRow(cells) {
				if err := emit(xlsLine{Row: cells}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
