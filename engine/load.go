package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
// block a column leaves a margin. Databases made now have smaller blocks
// (ownerBlockSize) and need less, but an owner's older database keeps its
// blocks of 256 KiB, so the bound stays theirs.
const loadBlock = 256 << 10

// widthFor is the widest table a buffer pool of pool bytes loads: a block
// a column (3,051 columns at the default --memory-limit of 1GB).
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
	// Name is the sheet name, or the file name for single-table formats.
	Name string
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
	// the format has none); HeaderAsked, that a person named it.
	HeaderRow   int
	HeaderAsked bool
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
}

// load decides each column's type from all of its values and creates the
// typed table and its catalog rows, all inside the transaction open on
// conn. A CSV or JSON file DuckDB can read is loaded directly, its types
// proved as it is read (direct.go), or else staged as text and classified
// in SQL (stage.go, sqlclassify.go); every other source streams its rows
// through Go into a staging table.
func (s *Store) load(ctx context.Context, conn *sql.Conn, f *catalog.File, ordinal int, src TableSource) (*catalog.Table, error) {
	stage := "dd_stage_" + strconv.Itoa(ordinal)
	var (
		st  stagedTable
		ok  bool
		err error
	)
	var (
		direct   directRead
		isDirect bool
	)
	wide := len(src.Header) > directWidth && (src.Rows != nil || src.RowsWithNulls != nil)
	switch {
	case wide:
	case src.CSV != nil:
		direct, isDirect, err = s.csvDirect(ctx, conn, ordinal, src)
	case src.JSON != nil:
		direct, isDirect = s.jsonDirect(src)
	}
	if err != nil {
		return nil, err
	}
	if src.Counted != nil {
		return s.loadCounted(ctx, conn, f, ordinal, src)
	}
	// viaRows: the direct load found rows only the Go stream keeps, which
	// staging would find again.
	viaRows := false
	if isDirect && !s.staged {
		t, rows, err := s.loadDirect(ctx, conn, f, ordinal, src, direct)
		if err != nil || t != nil {
			return t, err
		}
		viaRows = rows
	}
	switch {
	case viaRows, wide:
	case src.CSV != nil:
		st, ok, err = s.stageCSV(ctx, conn, stage, ordinal, src)
	case src.JSON != nil:
		st, ok, err = s.stageJSON(ctx, conn, stage, src)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		if st, err = s.stageRows(ctx, src); err != nil {
			return nil, err
		}
	}
	return s.finish(ctx, conn, f, ordinal, src, stage, st)
}

// loadCounted loads a source whose columns' counts, and so types, are
// known beforehand: its rows go straight from the source to DuckDB's query
// appender (appendTyped), with nothing staged or written first.
func (s *Store) loadCounted(ctx context.Context, conn *sql.Conn, f *catalog.File, ordinal int, src TableSource) (*catalog.Table, error) {
	width := len(src.Header)
	if err := s.checkWidth(src, width); err != nil {
		return nil, err
	}
	labels, keys := columnNames(src, width)
	cols := make([]typing.Stats, width)
	for i := range cols {
		if i < len(src.Counted) {
			cols[i] = src.Counted[i]
		}
	}
	decisions := decideColumns(src, keys, cols, nil)
	t := newTable(f, ordinal, src, 0)
	setColumns(t, labels, keys, decisions)
	sel := make([]string, len(decisions))
	whole := make([]bool, len(decisions))
	for i, d := range decisions {
		sel[i] = ducksql.StageCast(d, i+1) + " AS " + ducksql.Ident(keys[i])
		if src.Typed != nil && d.Type == typing.TypeInteger && d.Written == nil {
			whole[i] = true
			sel[i] = ducksql.StageColumn(i+1) + " AS " + ducksql.Ident(keys[i])
		}
	}
	var (
		rows  int64
		stats RowStats
	)
	err := s.appendTyped(ctx, conn, t, columnDefs(keys, decisions), strings.Join(sel, ", "), width, whole, func(yield func([]driver.Value) error) error {
		vals := make([]driver.Value, width)
		var err error
		stats, err = src.typedRows(func(row []string, typed []any, null []bool) error {
			if len(row) != width {
				return fmt.Errorf("engine: %s: a counted source yielded a row of %d columns, its header has %d", sourceName(src), len(row), width)
			}
			rows++
			for i, cell := range row {
				switch {
				case emptyCell(i, cell, typed, null):
					vals[i] = nil
				case whole[i]:
					n, err := wholeValue(typed[i], cell)
					if err != nil {
						return fmt.Errorf("engine: %s: row %d, column %d: %w", sourceName(src), rows, i+1, err)
					}
					vals[i] = n
				default:
					if err := checkCell(src, rows, i+1, cell); err != nil {
						return err
					}
					vals[i] = cell
				}
			}
			return yield(vals)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	t.RowCount = rows
	if err := s.record(ctx, conn, t, src, stats, nil); err != nil {
		return nil, err
	}
	return t, nil
}

// checkCell refuses a cell longer than a cell may be, naming its row and
// column (from 1). Errors: invalid.
func checkCell(src TableSource, row int64, col int, cell string) error {
	if len(cell) > MaxCellChars && utf8.RuneCountInString(cell) > MaxCellChars {
		return datadesk.Errorf(datadesk.Invalid, "%s: row %d, column %d has a cell of %d characters; a cell holds at most %d",
			sourceName(src), row, col, utf8.RuneCountInString(cell), MaxCellChars).WithField("file")
	}
	return nil
}

// stagedTable is what staging found: the rows, the width, what the source
// reported, and each column's shape counts.
type stagedTable struct {
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

// stageRows writes the source's rows to a spool, counting each column's
// value shapes in Go as the rows stream in. A row's values are what a
// staging table of VARCHAR columns would hold: an empty cell, or an empty
// text where the source tells them apart (null), is NULL.
func (s *Store) stageRows(ctx context.Context, src TableSource) (st stagedTable, err error) {
	if len(src.Header) > s.maxWidth {
		return stagedTable{}, tooWide(src, "the header has", len(src.Header), s.maxWidth)
	}
	sp, err := newSpool(s.IncomingDir())
	if err != nil {
		return stagedTable{}, err
	}
	defer func() {
		if err != nil {
			sp.Close()
		}
	}()
	var (
		rows  int64
		width = min(len(src.Header), s.maxWidth)
		cols  = make([]typing.Stats, s.maxWidth)
		kinds []typing.KindCounts
		vals  = make([]driver.Value, 0, width)
	)
	if src.Cells != nil {
		kinds = make([]typing.KindCounts, s.maxWidth)
	}
	appendRow := func(row []string, null []bool) error {
		if len(row) > s.maxWidth {
			return tooWide(src, fmt.Sprintf("row %d has", rows+1), len(row), s.maxWidth)
		}
		width = max(width, len(row))
		vals = vals[:0]
		for i, cell := range row {
			if err := checkCell(src, rows+1, i+1, cell); err != nil {
				return err
			}
			switch {
			case null != nil && null[i]:
				vals = append(vals, nil)
			case cell != "" || null != nil:
				cols[i].Add(cell)
				vals = append(vals, cell)
			default:
				vals = append(vals, nil)
			}
		}
		rows++
		if rows%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return sp.add(vals)
	}
	var stats RowStats
	if src.Cells != nil {
		stats, err = src.Cells(func(row []string, k []typing.CellKind) error {
			for i := 0; i < len(row) && i < len(k) && i < s.maxWidth; i++ {
				kinds[i].Add(k[i], row[i])
			}
			return appendRow(row, nil)
		})
	} else {
		stats, err = src.rows(appendRow)
	}
	if err != nil {
		return stagedTable{}, classify(ctx, err)
	}
	return stagedTable{rows: rows, width: width, stats: stats, cols: cols, kinds: kinds, spool: sp}, nil
}

// finish decides the types of a staged table and creates the typed table
// and its catalog rows.
func (s *Store) finish(ctx context.Context, conn *sql.Conn, f *catalog.File, ordinal int, src TableSource, stage string, st stagedTable) (*catalog.Table, error) {
	if st.spool != nil {
		defer st.spool.Close()
	}
	if err := s.checkWidth(src, st.width); err != nil {
		return nil, err
	}
	labels, keys := columnNames(src, st.width)
	decisions := decideColumns(src, keys, st.cols, st.kinds)
	t := newTable(f, ordinal, src, st.rows)
	sel := make([]string, len(decisions))
	for i, d := range decisions {
		sel[i] = ducksql.StageCast(d, i+1) + " AS " + ducksql.Ident(keys[i])
	}
	setColumns(t, labels, keys, decisions)
	remote, err := s.storeTyped(ctx, conn, t, stage, columnDefs(keys, decisions), strings.Join(sel, ", "), st)
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
	var notes []string
	if remote == nil {
		var err error
		if notes, err = s.refine(ctx, conn, t); err != nil {
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
	}
	for _, c := range t.Columns {
		t.Report.Columns = append(t.Report.Columns, catalog.ReportOf(c))
	}
	t.Report.Notes = append(t.Report.Notes, spaceNotes(t.Columns)...)
	t.Report.Notes = append(t.Report.Notes, notes...)
	if src.HeaderAsked {
		t.Report.Notes = append(t.Report.Notes, fmt.Sprintf("the header is row %d, as asked when the file was read", src.HeaderRow))
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
	for i, c := range t.Columns {
		if _, err := conn.ExecContext(ctx, `INSERT INTO dd_columns VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.ID, i, c.Key, c.Label, c.Type, c.Identifier, c.Reason); err != nil {
			return classify(ctx, err)
		}
	}
	return nil
}

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
