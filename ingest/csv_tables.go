package ingest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/text/transform"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// csvWindowRows bounds the records a CSV file's tables are found in: a
// CSV file is read through Go where its layout needs it, else by
// DuckDB, and finding its tables costs every upload.
const csvWindowRows = 2_000

// csvSources prepares the tables of a CSV or TSV file (findTables, as
// for a sheet). delim 0 means sniff it. A file of one table whose header
// is its first record, with nothing to keep out, is read by DuckDB's own
// reader; any other through Go.
func (in *Ingester) csvSources(path, name string, delim rune, head []byte) ([]engine.TableSource, error) {
	enc, encName := textEncoding(head)
	decoded, _, _ := transform.Bytes(enc.NewDecoder(), head)
	if bytes.IndexByte(decoded, 0) >= 0 {
		return nil, datadesk.Errorf(datadesk.Invalid, "%s is binary data, not CSV text", name).WithField("file")
	}
	cr := crLines(decoded)
	if delim == 0 {
		sniffed := decoded
		if cr {
			sniffed = bytes.ReplaceAll(decoded, []byte{'\r'}, []byte{'\n'})
		}
		delim = sniffDelimiter(string(sniffed))
	}
	notes := []string{fmt.Sprintf("encoding %s, delimiter %s", encName, delimName(delim))}
	if cr {
		notes = append(notes, "lines end with a carriage return alone (classic Mac OS), read as lines")
	}
	// The header is read now so that a file without one is refused before
	// anything is stored.
	if _, err := in.csvHeader(path, head, delim); err != nil {
		return nil, err
	}
	choice := in.headerFor("")
	window, err := in.csvWindow(path, head, delim, choice)
	if err != nil {
		return nil, err
	}
	if len(window) == 0 {
		// No record with a value: the reading says what the file holds.
		window = []probeRow{{row: 1}}
	}
	tables, err := choose(window, choice, name, "the file")
	if err != nil {
		return nil, err
	}
	var srcs []engine.TableSource
	for i, t := range tables {
		tname := name
		if i > 0 {
			tname = tableName(name, i, t)
		}
		src := tableSource(t, tname, choice)
		src.Notes = append(notes, src.Notes...)
		src.Rows = func(yield func([]string) error) (engine.RowStats, error) {
			return in.csvBlock(path, head, name, delim, t, choice, yield)
		}
		srcs = append(srcs, src)
	}
	utf8 := encName == "UTF-8" || encName == "UTF-8 with BOM"
	if len(srcs) == 1 && utf8 && delim < 128 && !cr && plainLayout(tables[0], window, choice) && !in.tailHasNotes(path, delim, tables[0]) {
		// DuckDB's reader takes minutes to give up on a quoted field of
		// millions of lines; such a record is refused first, at the speed
		// of finding quotes.
		if err := in.checkQuotedFields(path, name, byte(delim)); err != nil {
			return nil, err
		}
		// DuckDB reads UTF-8 itself; the row stream stays for what its
		// reader hands back (rows wider than the header) and for the
		// encodings it does not take.
		srcs[0].CSV = &engine.CSVFile{Path: path, Delimiter: byte(delim), MaxLine: in.cfg.MaxLine}
	}
	return srcs, nil
}

// plainLayout reports whether table t of a CSV file is read as DuckDB
// reads it: its header the first record alone, no row above it, no
// section column, no row asked kept out, and none of the window's rows
// kept out of it.
func plainLayout(t layout, window []probeRow, choice headerChoice) bool {
	if len(t.header) != 1 || t.header[0].row != 1 || len(t.above) > 0 || t.sections || len(choice.skip) > 0 || choice.asked() && choice.rows[0] != 1 {
		return false
	}
	b := newBlockReader(t, nil, true, func([]string, []typing.CellKind) error { return nil })
	for _, r := range window[1:] {
		_ = b.add(r)
	}
	return len(b.kept) == 0
}

// csvWindow reads the records with a value that a CSV file's tables are
// found in, each with its record's number from 1, the empty lines and
// records above it, and its cells' kinds as a reader would see them.
func (in *Ingester) csvWindow(path string, head []byte, delim rune, choice headerChoice) ([]probeRow, error) {
	f, err := in.openCSV(path, head, delim)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var window []probeRow
	rr := &csvRecords{r: f.r}
	under, gap, size := 0, 0, 0
	for len(window) < csvWindowRows {
		rec, row, blank, err := rr.next()
		if err != nil {
			// The end, or a broken or long record: the window ends
			// there, and the reading of the file says what is wrong.
			break
		}
		gap += blank
		if emptyRow(rec) || choice.skip[row] {
			gap++
			continue
		}
		window = append(window, probeRow{row: row, gap: gap, texts: rec, kinds: textKinds(rec)})
		gap = 0
		for _, t := range rec {
			size += len(t)
		}
		if size >= windowBytes && !choice.asked() {
			break
		}
		if l := choice.last(); l > 0 && row > l {
			under++
		}
		if choice.asked() && under >= 4*profileRows || !choice.find && !choice.asked() && len(window) > profileRows {
			break
		}
	}
	return window, nil
}

// csvBlock streams the records of table t of a CSV file, under its
// header, sorted by a blockReader. Records the reader cannot parse are
// rejected and counted.
func (in *Ingester) csvBlock(path string, head []byte, name string, delim rune, t layout, choice headerChoice, yield func([]string) error) (stats engine.RowStats, err error) {
	// A fault of this reader's fails the upload, never the process: the
	// rows may be read on a goroutine of the load, where a panic would end
	// the server.
	defer func() {
		if r := recover(); r != nil {
			err = datadesk.Errorf(datadesk.Internal, "%s could not be read as a table", name).WithCause(fmt.Errorf("panic: %v", r))
		}
	}()
	f, err := in.openCSV(path, head, delim)
	if err != nil {
		return stats, err
	}
	defer f.Close()
	r, ll := f.r, f.ll
	r.ReuseRecord = true
	first := t.start
	if n := len(t.header); n > 0 {
		first = t.header[n-1].row + 1
	}
	width := 0
	if len(t.header) > 0 {
		width = len(t.header[len(t.header)-1].texts)
	}
	numbers := &engine.RowNumbers{}
	b := newBlockReader(t, choice.skip, true, func(texts []string, _ []typing.CellKind) error { return yield(texts) })
	b.onData = func(row int) { numbers.Add(int64(row)) }
	wider := 0
	rr := &csvRecords{r: r}
	for {
		rec, n, _, err := rr.next()
		if err == io.EOF || t.end > 0 && n > t.end {
			break
		}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe) && !errors.Is(err, errLineTooLong):
			if n >= first {
				stats.Rejected++
				if len(stats.Rejects) < maxRejectSamples {
					stats.Rejects = append(stats.Rejects, catalog.Reject{Line: int64(pe.Line), Reason: pe.Err.Error()})
				}
			}
			continue
		case err != nil:
			return stats, csvError(name, ll, err)
		case n < first:
			continue
		}
		if len(rec) > width {
			wider++
		}
		if err := b.add(probeRow{row: n, texts: rec}); err != nil {
			return stats, err
		}
	}
	stats.Skipped, stats.Rows = b.end(), numbers
	above := make([]catalog.SkippedRow, 0, len(t.above))
	for _, r := range t.above {
		above = append(above, skippedRow(r, keptAbove))
	}
	if note := keptNote(above, stats.Skipped, headerOf(t.header, t.units), t.sections, choice.asked()); note != "" {
		stats.Notes = append(stats.Notes, note)
	}
	if wider > 0 {
		have := "rows have"
		if wider == 1 {
			have = "row has"
		}
		stats.Notes = append(stats.Notes, fmt.Sprintf("%d %s more fields than the header; their extra values are kept in columns named by position", wider, have))
	}
	return stats, nil
}

// tailBytes is how much of a CSV file's end is read to find notes after
// its data.
const tailBytes = 64 << 10

// tailHasNotes reports whether a UTF-8 CSV file ends with rows that
// table t would keep out (notes below its data), read from its last
// tailBytes: such a file is read through Go, which keeps them out and
// lists them, rather than by DuckDB.
func (in *Ingester) tailHasNotes(path string, delim rune, t layout) bool {
	if t.literal {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false
	}
	start := max(0, st.Size()-tailBytes)
	buf := make([]byte, st.Size()-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return false
	}
	if start > 0 {
		// From the first whole line.
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return false
		}
		buf = buf[i+1:]
	}
	r := csv.NewReader(bytes.NewReader(buf))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = delim, true, -1
	b := newBlockReader(t, nil, true, func([]string, []typing.CellKind) error { return nil })
	for n := 1; ; n++ {
		rec, err := r.Read()
		if err != nil {
			break
		}
		_ = b.add(probeRow{row: n, texts: rec})
	}
	return len(b.end()) > 0
}

// csvRecords numbers a CSV file's records as a spreadsheet program shows
// them: a blank line, which encoding/csv skips, is a row too.
type csvRecords struct {
	r    *csv.Reader
	n    int // the rows so far
	last int // the line the last record ended on, about
}

// next reads the next record: its row from 1 and the blank lines before
// it.
func (c *csvRecords) next() (rec []string, row, blank int, err error) {
	rec, err = c.r.Read()
	if err != nil {
		c.n++
		return rec, c.n, 0, err
	}
	line, _ := c.r.FieldPos(0)
	blank = max(line-c.last-1, 0)
	c.last, _ = c.r.FieldPos(len(rec) - 1)
	c.n += blank + 1
	return rec, c.n, blank, nil
}
