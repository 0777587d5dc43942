package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// MaxColumns is the widest table any format can hold: Excel's last
// column, XFD. What a server loads is bounded lower by its memory limit
// (Engine.MaxWidth).
const MaxColumns = 16384

// loadBlock is what DuckDB holds per column of a table being loaded, in
// blocks written out only when a row group fills: a table's width, not its
// rows, decides the memory its load needs. Measured in a database of
// DuckDB's default blocks of 256 KiB with a 195 MiB pool, 1,025 columns
// load and 1,500 run out of memory (about 130 to 190 KiB a column); a
// block a column leaves a margin. Owners' databases have blocks of that
// size (ownerBlockSize); those made with smaller ones need less.
const loadBlock = 256 << 10

// widthFor is the widest table a buffer pool of pool bytes loads: a block
// a column (3,051 columns at the default --memory-limit of 1GB). The pool
// is DuckDB's share of the limit before what the server holds beside it
// (Config.HeldBeside, the answers' cache) is taken off: a width counted at
// a block a column, where a load was measured at 130 to 190 KiB, leaves
// more than the cache's sixteenth of the limit spare, and a server given a
// cache loads the tables it loaded before.
func widthFor(pool int64) int {
	return max(64, min(MaxColumns, int(pool/loadBlock)))
}

// tooWide refuses a table wider than the server loads.
func tooWide(src TableSource, what string, cols, limit int) error {
	return datadesk.Errorf(datadesk.TooLarge, "%s: %s %d columns; this server loads at most %d at its memory limit "+
		"(each column being loaded holds DuckDB blocks of 256 KiB): raise --memory-limit, or split the table", sourceName(src), what, cols, limit).WithField("file")
}

// directWidth is the widest table read by DuckDB's own readers (the
// direct load and staging in SQL); a wider one streams through Go. Those
// loads run one statement with expressions for every column, and DuckDB's
// planner takes time and memory growing with the square of their number:
// 100 rows of 1,000 columns took over two minutes and 6.7 GB that way,
// and 1.6 s and 130 MB through Go. At this width and below, DuckDB's
// parallel reader is the faster one (datadesk-bench --wide measures both).
const directWidth = 64

// MaxCellChars bounds a stored cell's text: Excel's own limit. A longer
// cell is refused at ingest, naming it, rather than stored, so no answer
// that shows cells can be made huge by one of them.
const MaxCellChars = 32_767

// TableSource is one table as ingest reads it: a header and a stream of rows
// of text. The engine decides the column types from every value.
type TableSource struct {
	// Name is the table's name: the sheet's, a sheet's and its block's
	// when a sheet holds several tables, or the file name for
	// single-table formats.
	Name string
	// Sheet is the sheet the table is read from ("" for single-table
	// formats).
	Sheet string
	// Units, when set, are the columns' units, from a units row of the
	// header ("£", "%"); "" for a column without one.
	Units []string
	// Header holds the labels as the file has them; it may be shorter than
	// the widest row, and missing labels are named by position.
	Header []string
	// Keys, if set, are the column keys to use instead of keys derived
	// from the labels; the caller has made them unique.
	Keys []string
	// Hints carry what the format knows about a column beyond its text.
	// It may be shorter than the table is wide.
	Hints []typing.Hint
	// Rows calls yield once for each data row, in file order. An empty
	// string is an empty cell.
	Rows func(yield func(row []string) error) (RowStats, error)
	// Cells, when set, is used instead of Rows by spreadsheet formats: it
	// yields each data row with the kind of every cell (kinds may be
	// shorter than the row; missing kinds are empty cells), and the column
	// types are decided from the kinds as well as the texts.
	Cells func(yield func(row []string, kinds []typing.CellKind) error) (RowStats, error)
	// CSV, if set, names a CSV file that DuckDB's own reader can stage
	// instead of Rows; Rows stays the way for what that reader refuses to
	// keep (rows wider than the header).
	CSV *CSVFile
	// JSON, if set, names a JSON file of flat records that DuckDB's own
	// reader can stage instead of RowsWithNulls, which stays the way when
	// that reader refuses the file.
	JSON *JSONFile
	// RowsWithNulls, if set, is used instead of Rows by formats that tell
	// an empty cell from empty text: null[i] marks an empty cell, and an
	// empty string not marked is kept as empty text.
	RowsWithNulls func(yield func(row []string, null []bool) error) (RowStats, error)
	// Notes are remarks for the import report.
	Notes []string
	// Skipped are the rows above the header kept out of the table.
	Skipped []catalog.SkippedRow
	// HeaderRow is the header's row in the sheet or file, from 1 (0 when
	// the format has none), its last when it has several (HeaderRows);
	// HeaderAsked, that a person named them.
	HeaderRow   int
	HeaderRows  []int
	HeaderAsked bool
	// ReadAs says, for a table read again with a person's corrections,
	// how ("header rows 4-6 of sheet Prices").
	ReadAs string
	// Counted, when set, holds every column's counts over all the rows
	// Rows or RowsWithNulls will yield, taken beforehand by a source that
	// declares every column's type (a Type hint for each): the table is
	// then created from the rows written out as CSV, so that a source too
	// big to hold twice is never staged. Such a table stays in DuckDB
	// whatever its size, and its text must be valid UTF-8.
	Counted []typing.Stats
	// Typed, when set with Counted, is used instead of RowsWithNulls: it
	// yields each row's text as RowsWithNulls would and its values as the
	// source read them, typed[i] nil for an empty cell. A column decided
	// a whole number is then taken from typed (an int64, or text that
	// reads as one) rather than from its text cast in SQL; the others
	// from text.
	Typed func(yield func(text []string, typed []any) error) (RowStats, error)
}

// RowStats is what a source reports after streaming its rows.
type RowStats struct {
	// Rejected counts rows the source could not read; Rejects lists the
	// first few.
	Rejected int64
	Rejects  []catalog.Reject
	// Notes are remarks found while reading, for the import report.
	Notes []string
	// Skipped are rows found while reading to be kept out of the table
	// (notes below the data).
	Skipped []catalog.SkippedRow
	// Rows, when set, maps the rows yielded to their rows in the sheet
	// or file, for the report of cells the load stores empty.
	Rows *RowNumbers
}

// Loading is one choice among four ways, each in a file of its own:
//
//   - appendDeclared (load_declared.go): a source that declares every
//     column's type and counts (files.create's typed rows) is appended
//     straight into the typed table by DuckDB's appender.
//   - readTyped (load_read_typed.go): DuckDB's own CSV or JSON reader
//     loads the file straight into the typed table, the types proposed by
//     the first rows and proved on every value as it is read.
//   - readAsText (load_read_text.go): DuckDB's reader loads the file as
//     text into a temporary table; each column's values are counted in
//     SQL and the typed table is made from it.
//   - streamRows (load_stream.go): the source's rows stream through Go
//     into a spool file, their values counted in Go, and the typed table
//     is made from the spool.
//
// firstWay picks where a source starts; a way that cannot load it (the
// reader refused a row, a remote backend wants the table's size first)
// leaves nothing behind and names the way that can.

// loadWay is one way a table's rows get into the owner's database.
type loadWay interface {
	// load loads job's table, or returns no table and the way to try
	// next.
	load(ctx context.Context, s *Store, conn *sql.Conn, job loadJob) (*catalog.Table, loadWay, error)
}

// loadJob is one table to load: its source, its file and its place
// among the file's tables.
type loadJob struct {
	f       *catalog.File
	ordinal int
	src     TableSource
}

// stage names the job's temporary table of text.
func (j loadJob) stage() string { return "dd_stage_" + strconv.Itoa(j.ordinal) }

// firstWay is the way a source starts from.
func (s *Store) firstWay(src TableSource) loadWay {
	readable := src.CSV != nil || src.JSON != nil
	switch {
	case src.Counted != nil:
		return appendDeclared{}
	case len(src.Header) > directWidth && (src.Rows != nil || src.RowsWithNulls != nil):
		// One statement with expressions for every column of a wide
		// table costs DuckDB's planner the square of its width.
		return streamRows{}
	case readable && !s.staged:
		return readTyped{}
	case readable:
		return readAsText{}
	}
	return streamRows{}
}

// load decides each column's type from all of its values and creates the
// typed table and its catalog rows, all inside the transaction open on
// conn, by the ways firstWay and its fallbacks choose.
func (s *Store) load(ctx context.Context, conn *sql.Conn, f *catalog.File, ordinal int, src TableSource) (*catalog.Table, error) {
	job := loadJob{f: f, ordinal: ordinal, src: src}
	for way := s.firstWay(src); ; {
		t, next, err := way.load(ctx, s, conn, job)
		if err != nil || next == nil {
			return t, err
		}
		way = next
	}
}

// tallied is what reading a table as text found: the rows, the width,
// what the source reported, and each column's shape counts.
type tallied struct {
	rows  int64
	width int
	stats RowStats
	cols  []typing.Stats
	// kinds, for spreadsheet sources, counts each column's cell kinds.
	kinds []typing.KindCounts
	// spool holds the rows of a source read through Go; without it they
	// are in the staging table.
	spool *spool
}

// createTyped decides the types of a table read as text (a temporary
// table of text, or a spool) from its counts, and creates the typed table
// and its catalog rows.
func (s *Store) createTyped(ctx context.Context, conn *sql.Conn, job loadJob, st tallied) (*catalog.Table, error) {
	f, ordinal, src, stage := job.f, job.ordinal, job.src, job.stage()
	if st.spool != nil {
		defer st.spool.Close()
	}
	if err := s.checkWidth(src, st.width); err != nil {
		return nil, err
	}
	labels, keys := columnNames(src, st.width)
	decisions := decideColumns(src, keys, st.cols, st.kinds)
	t := newTable(f, ordinal, src, st.rows)
	setColumns(t, labels, keys, decisions)
	remote, err := s.storeTyped(ctx, conn, t, stage, keys, decisions, st)
	if err != nil {
		return nil, err
	}
	if err := s.record(ctx, conn, t, src, st.stats, remote); err != nil {
		return nil, err
	}
	return t, nil
}

// columnDefs are the definitions of a table's columns of keys, typed as
// decided.
func columnDefs(keys []string, decisions []typing.Decision) string {
	defs := make([]string, len(decisions))
	for i, d := range decisions {
		defs[i] = ducksql.Ident(keys[i]) + " " + sqlTypeName(d)
	}
	return strings.Join(defs, ", ")
}

// cleanColumn is the select term of staged column i (from 0), typed as
// d and named key, for values cleaned in Go (ducksql.CleanValue): only
// cast (ducksql.CleanCast), as a wide select of TextCasts costs DuckDB's
// planner seconds.
func cleanColumn(d typing.Decision, i int, key string) string {
	return ducksql.CleanCast(d, ducksql.StageColumn(i+1)) + " AS " + ducksql.Ident(key)
}

// checkWidth refuses a table without columns or with more than the
// server loads.
func (s *Store) checkWidth(src TableSource, width int) error {
	if width == 0 {
		return datadesk.Errorf(datadesk.Invalid, "%s: no columns: the table has neither a header nor values", sourceName(src))
	}
	if width > s.maxWidth {
		return tooWide(src, "the header has", width, s.maxWidth)
	}
	return nil
}

// columnNames returns the labels of a table of width columns and their
// keys, unique and never a name the engine uses.
func columnNames(src TableSource, width int) (labels, keys []string) {
	labels = make([]string, width)
	for i, l := range src.Header {
		if i < width {
			labels[i] = typing.CleanLabel(l)
		}
	}
	keys = make([]string, width)
	for i, l := range labels {
		keys[i] = typing.Key(l)
	}
	for i, k := range src.Keys {
		if i < len(keys) && k != "" {
			keys[i] = k
		}
	}
	return labels, typing.UniqueKeys(keys)
}

// decideColumns decides every column's type from its counts (and, for
// spreadsheets, its cell kinds).
func decideColumns(src TableSource, keys []string, cols []typing.Stats, kinds []typing.KindCounts) []typing.Decision {
	hints := make([]typing.Hint, len(keys))
	copy(hints, src.Hints)
	decisions := make([]typing.Decision, len(keys))
	for i := range decisions {
		if kinds != nil {
			decisions[i] = typing.DecideCells(&kinds[i], &cols[i], keys[i], hints[i])
			continue
		}
		decisions[i] = typing.Decide(&cols[i], keys[i], hints[i])
		decisions[i].KeepEmpty = src.RowsWithNulls != nil || src.JSON != nil
		decisions[i].Trimmed = cols[i].Trimmed
	}
	for i := range decisions {
		decisions[i].Blank, decisions[i].Padded = cols[i].Blank, cols[i].Padded
	}
	return decisions
}

func newTable(f *catalog.File, ordinal int, src TableSource, rows int64) *catalog.Table {
	return &catalog.Table{
		ID:        datadesk.NewID("t"),
		FileID:    f.ID,
		Name:      datadesk.CleanName(src.Name),
		Ordinal:   ordinal,
		RowCount:  rows,
		CreatedAt: f.CreatedAt,
	}
}

func setColumns(t *catalog.Table, labels, keys []string, decisions []typing.Decision) {
	t.Columns = t.Columns[:0]
	for i, d := range decisions {
		c := catalog.Column{Key: keys[i], Label: labels[i], Type: d.Type, Identifier: d.Identifier, Reason: d.Reason, Blank: d.Blank, Numberish: d.Numberish}
		if d.Type == typing.TypeText {
			c.Trimmed = d.Padded
		}
		t.Columns = append(t.Columns, c)
	}
}

// record writes the import report and the catalog rows of a loaded table.
func (s *Store) record(ctx context.Context, conn *sql.Conn, t *catalog.Table, src TableSource, stats RowStats, remote catalog.Backend) error {
	for i := range t.Columns {
		if i < len(src.Units) {
			t.Columns[i].Unit = src.Units[i]
		}
	}
	var notes []string
	var cleared []catalog.ClearedCell
	if remote == nil {
		var err error
		if notes, cleared, err = s.refine(ctx, conn, t, stats.Rows); err != nil {
			return err
		}
		if err := s.measureDigits(ctx, conn, t); err != nil {
			return err
		}
	}
	t.Report = catalog.Report{
		Table:        src.Name,
		RowsRead:     t.RowCount + stats.Rejected,
		RowsStored:   t.RowCount,
		RowsRejected: stats.Rejected,
		Rejects:      stats.Rejects,
		Notes:        append(slices.Clone(src.Notes), stats.Notes...),
		Skipped:      append(slices.Clone(src.Skipped), stats.Skipped...),
		HeaderRow:    int64(src.HeaderRow),
		HeaderAsked:  src.HeaderAsked,
		Sheet:        src.Sheet,
		ReadAs:       src.ReadAs,
		Cleared:      cleared,
	}
	for _, r := range src.HeaderRows {
		t.Report.HeaderRows = append(t.Report.HeaderRows, int64(r))
	}
	for _, c := range t.Columns {
		t.Report.Columns = append(t.Report.Columns, catalog.ReportOf(c))
	}
	t.Report.Notes = append(t.Report.Notes, spaceNotes(t.Columns)...)
	t.Report.Notes = append(t.Report.Notes, notes...)
	if src.ReadAs != "" {
		t.Report.Notes = append(t.Report.Notes, "read again as asked: "+src.ReadAs)
	}
	return s.recordLoaded(ctx, conn, t, remote)
}

// spaceNotes say, for the import report, which columns had cells of only
// spaces (stored empty) and text values with spaces around them (stored
// trimmed).
func spaceNotes(cols []catalog.Column) []string {
	var blank, trimmed []string
	for _, c := range cols {
		if c.Blank > 0 {
			blank = append(blank, fmt.Sprintf("%s (%d)", c.Key, c.Blank))
		}
		if c.Trimmed > 0 {
			trimmed = append(trimmed, fmt.Sprintf("%s (%d)", c.Key, c.Trimmed))
		}
	}
	var out []string
	if len(blank) > 0 {
		out = append(out, "cells of only spaces are stored empty: "+strings.Join(blank, ", "))
	}
	if len(trimmed) > 0 {
		out = append(out, "spaces around text values were trimmed: "+strings.Join(trimmed, ", "))
	}
	return out
}

// CountRows reads a source's rows through Go and returns how many it
// yields, as a load would store.
func CountRows(src TableSource) (int, error) {
	n := 0
	var err error
	if src.Cells != nil {
		_, err = src.Cells(func([]string, []typing.CellKind) error { n++; return nil })
	} else {
		_, err = src.rows(func([]string, []bool) error { n++; return nil })
	}
	return n, err
}

// typedRows yields a counted source's rows: with their typed values from
// Typed, else with their nulls from rows.
func (src TableSource) typedRows(yield func(row []string, typed []any, null []bool) error) (RowStats, error) {
	if src.Typed != nil {
		return src.Typed(func(row []string, typed []any) error { return yield(row, typed, nil) })
	}
	return src.rows(func(row []string, null []bool) error { return yield(row, nil, null) })
}

// emptyCell reports whether cell i of a row is empty: its typed value is
// nil, or null marks it; without either, an empty text is an empty cell,
// and with them "" is empty text.
func emptyCell(i int, cell string, typed []any, null []bool) bool {
	switch {
	case typed != nil:
		return typed[i] == nil
	case null != nil:
		return null[i]
	}
	return cell == ""
}

// wholeValue is a whole-number column's value: the source's int64, or its
// text read as one.
func wholeValue(typed any, text string) (int64, error) {
	if n, ok := typed.(int64); ok {
		return n, nil
	}
	n, err := strconv.ParseInt(strings.Trim(text, typing.SpaceChars), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not the whole number its column's type says", text)
	}
	return n, nil
}

// rows streams the source's rows with their null marks (nil when the
// format has none).
func (src TableSource) rows(yield func(row []string, null []bool) error) (RowStats, error) {
	if src.RowsWithNulls != nil {
		return src.RowsWithNulls(yield)
	}
	return src.Rows(func(row []string) error { return yield(row, nil) })
}

// writeCatalog records a new table and its columns, inside the transaction
// open on conn. kind is sheet for a file's own tables, view for derived ones.
func writeCatalog(ctx context.Context, conn *sql.Conn, t *catalog.Table, kind string) error {
	t.Location = catalog.LocationDuckDB
	report, err := json.Marshal(t.Report)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	var source, query any
	if t.SourceTableID != "" {
		source, query = t.SourceTableID, t.Query
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO dd_tables (id, file_id, ordinal, name, row_count, report, kind, source_table_id, query, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, t.FileID, t.Ordinal, t.Name, t.RowCount, string(report), kind, source, query, t.CreatedAt); err != nil {
		return classify(ctx, err)
	}
	// The columns go in a few statements of many rows: a statement a
	// column cost about a millisecond each, 3 of the 7.1 s a file of
	// 3,000 columns took to load.
	for start := 0; start < len(t.Columns); start += columnsPerInsert {
		cols := t.Columns[start:min(start+columnsPerInsert, len(t.Columns))]
		rows := make([]string, len(cols))
		args := make([]any, 0, 9*len(cols))
		for j, c := range cols {
			rows[j] = "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
			args = append(args, t.ID, start+j, c.Key, c.Label, c.Type, c.Identifier, c.Reason, int(c.Digits), c.Unit)
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO dd_columns (table_id, ordinal, key, label, type, identifier, reason, digits, unit) VALUES `+
			strings.Join(rows, ", "), args...); err != nil {
			return classify(ctx, err)
		}
	}
	return nil
}

// columnsPerInsert is how many columns' catalog rows one statement
// writes.
const columnsPerInsert = 256

func sourceName(src TableSource) string {
	if src.Name == "" {
		return "table"
	}
	return strconv.Quote(src.Name)
}

// copyTable makes a copy of a stored table the first table of file f, inside
// the transaction open on conn; no row leaves the database.
func (s *Store) copyTable(ctx context.Context, conn *sql.Conn, f *catalog.File, sourceID string) (*catalog.Table, error) {
	src, err := s.Table(ctx, sourceID)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{ID: datadesk.NewID("t"), FileID: f.ID, Name: strings.TrimSuffix(f.Filename, filepath.Ext(f.Filename)),
		RowCount: src.RowCount, Columns: src.Columns, CreatedAt: f.CreatedAt}
	if r, err := s.remoteOf(src); err != nil {
		return nil, err
	} else if r != nil {
		return s.copyOn(ctx, conn, r, src, t)
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE data.`+ducksql.Ident(t.ID)+` AS SELECT * FROM data.`+ducksql.Ident(src.ID)+` ORDER BY rowid`); err != nil {
		return nil, classify(ctx, err)
	}
	t.Report = catalog.Report{Table: t.Name, RowsRead: src.RowCount, RowsStored: src.RowCount, Notes: []string{"copied from table " + src.ID}}
	for _, c := range t.Columns {
		t.Report.Columns = append(t.Report.Columns, catalog.ReportOf(c))
	}
	if err := writeCatalog(ctx, conn, t, "sheet"); err != nil {
		return nil, err
	}
	return t, nil
}
