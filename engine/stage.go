package engine

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"datadesk"
)

// CSVFile is a CSV file as ingest found it, for DuckDB's reader: UTF-8,
// a header row, the delimiter ingest detected, double quotes.
type CSVFile struct {
	// Path is the file, inside the store's incoming directory: the only
	// place the owner's database may read.
	Path string
	// Delimiter is one ASCII character.
	Delimiter byte
	// MaxLine is the longest line allowed, in bytes.
	MaxLine int
}

// maxRejectSamples is how many rejected rows a report lists by line.
const maxRejectSamples = 20

// rejectReasons name DuckDB's reject types in the report's words.
var rejectReasons = map[string]string{
	"CAST":                   "a value could not be read",
	"MISSING COLUMNS":        "fewer fields than the header",
	"TOO MANY COLUMNS":       "more fields than the header",
	"UNQUOTED VALUE":         "a quote inside an unquoted field",
	"LINE SIZE OVER MAXIMUM": "the line is too long",
	"INVALID UNICODE":        "the line is not valid UTF-8",
	"INVALID STATE":          "the quoting is broken",
}

// stageCSV stages a CSV file with read_csv: every column VARCHAR, the
// dialect ingest detected, strict quoting, rows it cannot read kept aside
// and reported, then classifies every column in SQL. It returns false,
// having staged nothing, when the file must go through Go instead: it lies
// outside the incoming directory, or some rows are wider or narrower than
// the header (extra values are kept in columns named by position, missing
// ones are empty; DuckDB's padding of short rows would also stop it
// reading in parallel).
func (s *Store) stageCSV(ctx context.Context, conn *sql.Conn, stage string, ordinal int, src TableSource) (stagedTable, bool, error) {
	c := src.CSV
	width := len(src.Header)
	path, inside := s.incoming(c.Path)
	if !inside || width == 0 || width > MaxColumns || c.Delimiter == 0 || c.Delimiter == '"' || c.Delimiter > 127 {
		return stagedTable{}, false, nil
	}
	rejects, scans := "dd_rejects_"+strconv.Itoa(ordinal), "dd_reject_scans_"+strconv.Itoa(ordinal)
	dropRejects := func() error {
		for _, t := range []string{rejects, scans} {
			if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS temp.`+quoteIdent(t)); err != nil {
				return classify(ctx, err)
			}
		}
		return nil
	}
	if err := dropRejects(); err != nil {
		return stagedTable{}, false, err
	}
	cols := make([]string, width)
	for i := range cols {
		cols[i] = quoteString("c"+strconv.Itoa(i+1)) + ": 'VARCHAR'"
	}
	// DuckDB's buffer would be 16 times the longest line by default;
	// one line and a margin is enough.
	maxLine := c.MaxLine
	if maxLine <= 0 {
		maxLine = 2 << 20
	}
	read := `read_csv(` + quoteString(path) + `, auto_detect = false, header = true, delim = ` + quoteString(string(c.Delimiter)) +
		`, quote = '"', escape = '"', columns = {` + strings.Join(cols, ", ") + `}, strict_mode = true` +
		`, store_rejects = true, rejects_table = ` + quoteString(rejects) + `, rejects_scan = ` + quoteString(scans) +
		`, max_line_size = ` + strconv.Itoa(maxLine) + `, buffer_size = ` + strconv.Itoa(max(maxLine+1<<20, 32<<20)) + `, encoding = 'utf-8')`
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+quoteIdent(stage)+` AS SELECT * FROM `+read); err != nil {
		return stagedTable{}, false, classify(ctx, err)
	}
	st := stagedTable{width: width}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(stage)).Scan(&st.rows); err != nil {
		return stagedTable{}, false, classify(ctx, err)
	}
	wider, err := s.csvRejects(ctx, conn, rejects, &st.stats, src, maxLine)
	if err != nil {
		return stagedTable{}, false, err
	}
	if err := dropRejects(); err != nil {
		return stagedTable{}, false, err
	}
	if wider {
		if _, err := conn.ExecContext(ctx, `DROP TABLE `+quoteIdent(stage)); err != nil {
			return stagedTable{}, false, classify(ctx, err)
		}
		return stagedTable{}, false, nil
	}
	if err := checkCells(ctx, conn, stage, width, src); err != nil {
		return stagedTable{}, false, err
	}
	if st.cols, err = classifyStaged(ctx, conn, stage, width); err != nil {
		return stagedTable{}, false, err
	}
	return st, true, nil
}

// checkCells refuses a staged table with a cell longer than MaxCellChars,
// naming the first such cell as the Go path does. One scan of byte
// lengths settles most tables; characters are counted only past that.
func checkCells(ctx context.Context, conn *sql.Conn, stage string, width int, src TableSource) error {
	lens := make([]string, width)
	for i := range lens {
		lens[i] = "max(strlen(" + stageColumn(i+1) + "))"
	}
	vals := make([]sql.NullInt64, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := conn.QueryRowContext(ctx, `SELECT `+strings.Join(lens, ", ")+` FROM `+quoteIdent(stage)).Scan(ptrs...); err != nil {
		return classify(ctx, err)
	}
	for i, v := range vals {
		if v.Int64 <= MaxCellChars {
			continue
		}
		col := stageColumn(i + 1)
		var row, chars int64
		// Rows of a table made in this transaction are numbered from an
		// offset: the first has the smallest rowid.
		err := conn.QueryRowContext(ctx, `SELECT rowid - (SELECT min(rowid) FROM `+quoteIdent(stage)+`), length(`+col+`) FROM `+quoteIdent(stage)+
			` WHERE length(`+col+`) > `+strconv.Itoa(MaxCellChars)+` ORDER BY rowid LIMIT 1`).Scan(&row, &chars)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return classify(ctx, err)
		}
		return datadesk.Errorf(datadesk.Invalid, "%s: row %d, column %d has a cell of %d characters; a cell holds at most %d",
			sourceName(src), row+1, i+1, chars, MaxCellChars).WithField("file")
	}
	return nil
}

// csvRejects reads what read_csv kept aside into stats, and reports
// whether a row was wider than the header. A line longer than maxLine
// bytes fails the load, as it does on the Go path.
func (s *Store) csvRejects(ctx context.Context, conn *sql.Conn, table string, stats *RowStats, src TableSource, maxLine int) (bool, error) {
	rows, err := conn.QueryContext(ctx, `SELECT line, error_type::VARCHAR FROM temp.`+quoteIdent(table)+` ORDER BY line`)
	if err != nil {
		return false, classify(ctx, err)
	}
	defer rows.Close()
	wider := false
	for rows.Next() {
		var line int64
		var typ string
		if err := rows.Scan(&line, &typ); err != nil {
			return false, classify(ctx, err)
		}
		if typ == "LINE SIZE OVER MAXIMUM" {
			return false, datadesk.Errorf(datadesk.Invalid, "%s: line %d is longer than %d bytes", sourceName(src), line, maxLine).WithField("file")
		}
		wider = wider || typ == "TOO MANY COLUMNS" || typ == "MISSING COLUMNS"
		stats.Rejected++
		if len(stats.Rejects) < maxRejectSamples {
			reason, ok := rejectReasons[typ]
			if !ok {
				reason = "the row could not be read"
			}
			stats.Rejects = append(stats.Rejects, Reject{Line: line, Reason: reason})
		}
	}
	if err := rows.Err(); err != nil {
		return false, classify(ctx, err)
	}
	if stats.Rejected > 0 {
		stats.Notes = append(stats.Notes, fmt.Sprintf("%d rows could not be read and were left out", stats.Rejected))
	}
	return wider, nil
}

// incoming returns the absolute form of path and whether it lies inside
// the store's incoming directory, the only place the owner's database may
// read.
func (s *Store) incoming(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	return abs, err == nil && strings.HasPrefix(abs, s.IncomingDir()+string(filepath.Separator))
}

// JSONFile is a JSON file of flat records (every value a string, a number
// DuckDB renders as written, a boolean or null) as ingest found it, for
// DuckDB's reader.
type JSONFile struct {
	// Path is the file, inside the store's incoming directory.
	Path string
	// Lines is true for records one per line, false for an array of
	// records.
	Lines bool
	// Keys are the records' keys, one per column of the header, unique
	// case-insensitively.
	Keys []string
	// MaxRecord is the longest record, in bytes.
	MaxRecord int
}

// stageJSON stages a JSON file of flat records with read_json, every key
// a VARCHAR column (null and missing keys are NULL, "" stays empty text),
// then classifies every column in SQL. It returns false, having staged
// nothing, when the file lies outside the incoming directory and must go
// through Go instead. Ingest has checked the file's syntax and values: an
// error of DuckDB's reader here would abort the load's transaction, so no
// file it could refuse is sent to it.
func (s *Store) stageJSON(ctx context.Context, conn *sql.Conn, stage string, src TableSource) (stagedTable, bool, error) {
	j := src.JSON
	width := len(j.Keys)
	path, inside := s.incoming(j.Path)
	if !inside || width == 0 || width > MaxColumns || width != len(src.Header) {
		return stagedTable{}, false, nil
	}
	cols, names := make([]string, width), make([]string, width)
	for i, k := range j.Keys {
		cols[i] = quoteString(k) + ": 'VARCHAR'"
		names[i] = stageColumn(i + 1)
	}
	format := "array"
	if j.Lines {
		format = "newline_delimited"
	}
	read := `read_json(` + quoteString(path) + `, format = ` + quoteString(format) + `, records = true, columns = {` + strings.Join(cols, ", ") +
		`}, maximum_object_size = ` + strconv.Itoa(max(j.MaxRecord+1, 1<<20)) + `)`
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+quoteIdent(stage)+` AS SELECT * FROM `+read+` AS r(`+strings.Join(names, ", ")+`)`); err != nil {
		return stagedTable{}, false, classify(ctx, err)
	}
	st := stagedTable{width: width}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(stage)).Scan(&st.rows); err != nil {
		return stagedTable{}, false, classify(ctx, err)
	}
	var err error
	if st.cols, err = classifyStaged(ctx, conn, stage, width); err != nil {
		return stagedTable{}, false, err
	}
	return st, true, nil
}
