package engine

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
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

// csvRead returns the read_csv call of c: every column VARCHAR, the
// dialect ingest detected, strict quoting, and, when rejects is set, rows
// it cannot read kept aside in temp tables rejects and scans (else
// skipped). It returns false when the file must go through Go: it lies
// outside the incoming directory, or its dialect is one read_csv does not
// take.
func (s *Store) csvRead(src TableSource, rejects, scans string, bufferSize int) (string, bool) {
	c := src.CSV
	width := len(src.Header)
	path, inside := s.incoming(c.Path)
	if !inside || width == 0 || width > MaxColumns || c.Delimiter == 0 || c.Delimiter == '"' || c.Delimiter > 127 {
		return "", false
	}
	cols := make([]string, width)
	for i := range cols {
		cols[i] = ducksql.Literal("c"+strconv.Itoa(i+1)) + ": 'VARCHAR'"
	}
	maxLine := csvReadLimit(c)
	// Without rejects, the read is of the first rows: one thread reads
	// them, where several would each start on a buffer of the file, and
	// lines longer than a small buffer are left out of them (not of the
	// file).
	kept := `, ignore_errors = true, parallel = false`
	if rejects == "" {
		maxLine = min(maxLine, 1<<20)
	} else {
		kept = `, store_rejects = true, rejects_table = ` + ducksql.Literal(rejects) + `, rejects_scan = ` + ducksql.Literal(scans)
	}
	// A folder of the path named like key=value would otherwise add a
	// column (hive partitioning is detected from the path).
	return `read_csv(` + ducksql.Literal(path) + `, hive_partitioning = false, auto_detect = false, header = true, delim = ` + ducksql.Literal(string(c.Delimiter)) +
		`, quote = '"', escape = '"', columns = {` + strings.Join(cols, ", ") + `}, strict_mode = true` + kept +
		`, max_line_size = ` + strconv.Itoa(maxLine) + `, buffer_size = ` + strconv.Itoa(max(maxLine+1<<20, bufferSize)) + `, encoding = 'utf-8')`, true
}

// csvMaxLine is the longest line of the file that may be read. DuckDB's
// buffer would be 16 times the longest line by default; one line and a
// margin is enough.
func csvMaxLine(c *CSVFile) int {
	if c.MaxLine <= 0 {
		return 2 << 20
	}
	return c.MaxLine
}

// readLineLimit bounds the lines read_csv takes of a whole file: a limit
// above DuckDB's default made the whole read about 15% slower here. A
// file with a longer line, within its own limit, goes through Go
// (csvRejects).
const readLineLimit = 2 << 20

// csvReadLimit is the longest line read_csv is to take of the file.
func csvReadLimit(c *CSVFile) int { return min(csvMaxLine(c), readLineLimit) }

// csvRejectTables are the temp tables where read_csv keeps the rows of
// table ordinal that it cannot read; drop empties them.
func csvRejectTables(ctx context.Context, conn *sql.Conn, ordinal int) (rejects, scans string, drop func() error) {
	rejects, scans = "dd_rejects_"+strconv.Itoa(ordinal), "dd_reject_scans_"+strconv.Itoa(ordinal)
	return rejects, scans, func() error {
		for _, t := range []string{rejects, scans} {
			if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS temp.`+ducksql.Ident(t)); err != nil {
				return classify(ctx, err)
			}
		}
		return nil
	}
}

// csvDirect is the direct load's reader of a CSV file: rows read_csv
// cannot read are reported, and a row wider or narrower than the header
// or a line longer than the read takes sends the file through Go (extra
// values are kept in columns named by position, missing ones are empty;
// DuckDB's padding of short rows would also stop it reading in parallel).
func (s *Store) csvDirect(ctx context.Context, conn *sql.Conn, ordinal int, src TableSource) (directRead, bool, error) {
	rejects, scans, dropRejects := csvRejectTables(ctx, conn, ordinal)
	read, ok := s.csvRead(src, rejects, scans, 32<<20)
	if !ok {
		return directRead{}, false, nil
	}
	sample, _ := s.csvRead(src, "", "", 0)
	if err := dropRejects(); err != nil {
		return directRead{}, false, err
	}
	after := func() (RowStats, bool, error) {
		var stats RowStats
		wider, err := s.csvRejects(ctx, conn, rejects, &stats, src)
		if err != nil {
			return stats, false, err
		}
		return stats, !wider, dropRejects()
	}
	return directRead{read: read, sample: sample, first: src.Rows, width: len(src.Header), after: after}, true, nil
}

// readAsText loads a CSV or JSON file that DuckDB's reader takes as text
// into a temporary table (stageCSV, stageJSON), counts each column's
// values in SQL (sqlclassify.go) and makes the typed table from it
// (createTyped). It hands over to streamRows when the reader refuses the
// file or hands rows back.
type readAsText struct{}

func (readAsText) load(ctx context.Context, s *Store, conn *sql.Conn, job loadJob) (*catalog.Table, loadWay, error) {
	var (
		st  tallied
		ok  bool
		err error
	)
	if job.src.CSV != nil {
		st, ok, err = s.stageCSV(ctx, conn, job.stage(), job.ordinal, job.src)
	} else {
		st, ok, err = s.stageJSON(ctx, conn, job.stage(), job.ordinal, job.src)
	}
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, streamRows{}, nil
	}
	t, err := s.createTyped(ctx, conn, job, st)
	return t, nil, err
}

// stageCSV stages a CSV file with read_csv (csvRead), then classifies
// every column in SQL. It returns false, having staged nothing, when the
// file must go through Go instead (csvRead, csvDirect).
func (s *Store) stageCSV(ctx context.Context, conn *sql.Conn, stage string, ordinal int, src TableSource) (tallied, bool, error) {
	width := len(src.Header)
	rejects, scans, dropRejects := csvRejectTables(ctx, conn, ordinal)
	read, ok := s.csvRead(src, rejects, scans, 32<<20)
	if !ok {
		return tallied{}, false, nil
	}
	if err := dropRejects(); err != nil {
		return tallied{}, false, err
	}
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+ducksql.Ident(stage)+` AS SELECT * FROM `+read); err != nil {
		return tallied{}, false, readerRefused(ctx, err, ordinal)
	}
	st := tallied{width: width}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+ducksql.Ident(stage)).Scan(&st.rows); err != nil {
		return tallied{}, false, classify(ctx, err)
	}
	wider, err := s.csvRejects(ctx, conn, rejects, &st.stats, src)
	if err != nil {
		return tallied{}, false, err
	}
	if err := dropRejects(); err != nil {
		return tallied{}, false, err
	}
	if wider {
		if _, err := conn.ExecContext(ctx, `DROP TABLE `+ducksql.Ident(stage)); err != nil {
			return tallied{}, false, classify(ctx, err)
		}
		return tallied{}, false, nil
	}
	if err := checkCells(ctx, conn, stage, width, src); err != nil {
		return tallied{}, false, err
	}
	if st.cols, err = classifyStaged(ctx, conn, stage, width); err != nil {
		return tallied{}, false, err
	}
	return st, true, nil
}

// checkCells refuses a staged table with a cell longer than MaxCellChars,
// naming the first such cell as the Go path does. One scan of byte
// lengths settles most tables; characters are counted only past that.
func checkCells(ctx context.Context, conn *sql.Conn, stage string, width int, src TableSource) error {
	lens := make([]string, width)
	for i := range lens {
		lens[i] = "max(strlen(" + ducksql.StageColumn(i+1) + "))"
	}
	vals := make([]sql.NullInt64, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := conn.QueryRowContext(ctx, `SELECT `+strings.Join(lens, ", ")+` FROM `+ducksql.Ident(stage)).Scan(ptrs...); err != nil {
		return classify(ctx, err)
	}
	for i, v := range vals {
		if v.Int64 <= MaxCellChars {
			continue
		}
		col := ducksql.StageColumn(i + 1)
		var row, chars int64
		// Rows of a table made in this transaction are numbered from an
		// offset: the first has the smallest rowid.
		err := conn.QueryRowContext(ctx, `SELECT rowid - (SELECT min(rowid) FROM `+ducksql.Ident(stage)+`), length(`+col+`) FROM `+ducksql.Ident(stage)+
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
// whether the file must go through Go: a row wider than the header, or a
// line longer than the read takes (csvReadLimit) that the file's own
// limit allows. A line longer than that limit fails the load, as it does
// on the Go path.
func (s *Store) csvRejects(ctx context.Context, conn *sql.Conn, table string, stats *RowStats, src TableSource) (bool, error) {
	maxLine := csvReadLimit(src.CSV)
	rows, err := conn.QueryContext(ctx, `SELECT line, error_type::VARCHAR FROM temp.`+ducksql.Ident(table)+` ORDER BY line`)
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
			if maxLine < csvMaxLine(src.CSV) {
				// The Go reader takes lines up to the file's own limit.
				return true, nil
			}
			return false, datadesk.Errorf(datadesk.Invalid, "%s: line %d is longer than %d bytes", sourceName(src), line, maxLine).WithField("file")
		}
		wider = wider || typ == "TOO MANY COLUMNS" || typ == "MISSING COLUMNS"
		stats.Rejected++
		if len(stats.Rejects) < maxRejectSamples {
			reason, ok := rejectReasons[typ]
			if !ok {
				reason = "the row could not be read"
			}
			stats.Rejects = append(stats.Rejects, catalog.Reject{Line: line, Reason: reason})
		}
	}
	if err := rows.Err(); err != nil {
		return false, classify(ctx, err)
	}
	if stats.Rejected > 0 {
		stats.Notes = append(stats.Notes, fmt.Sprintf("%d %s could not be read and %s left out", stats.Rejected, plural(stats.Rejected, "row", "rows"), plural(stats.Rejected, "was", "were")))
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

// jsonRead returns the read_json call of src's file, every key a VARCHAR
// column c1..cN (null and missing keys are NULL, "" stays empty text), or
// false when the file lies outside the incoming directory and must go
// through Go instead. Ingest has checked the file's syntax and values: an
// error of DuckDB's reader here would abort the load's transaction, so no
// file it could refuse is sent to it.
func (s *Store) jsonRead(src TableSource) (string, bool) {
	j := src.JSON
	width := len(j.Keys)
	path, inside := s.incoming(j.Path)
	if !inside || width == 0 || width > MaxColumns || width != len(src.Header) {
		return "", false
	}
	cols, names := make([]string, width), make([]string, width)
	for i, k := range j.Keys {
		cols[i] = ducksql.Literal(k) + ": 'VARCHAR'"
		names[i] = ducksql.StageColumn(i + 1)
	}
	format := "array"
	if j.Lines {
		format = "newline_delimited"
	}
	return `read_json(` + ducksql.Literal(path) + `, hive_partitioning = false, format = ` + ducksql.Literal(format) + `, records = true, columns = {` + strings.Join(cols, ", ") +
		`}, maximum_object_size = ` + strconv.Itoa(max(j.MaxRecord+1, 1<<20)) + `) AS r(` + strings.Join(names, ", ") + `)`, true
}

// jsonDirect is the direct load's reader of a JSON file.
func (s *Store) jsonDirect(src TableSource) (directRead, bool) {
	read, ok := s.jsonRead(src)
	none := func() (RowStats, bool, error) { return RowStats{}, true, nil }
	return directRead{read: read, sample: read, width: len(src.JSON.Keys), after: none}, ok
}

// stageJSON stages a JSON file of flat records with read_json (jsonRead),
// then classifies every column in SQL. It returns false, having staged
// nothing, when the file must go through Go instead.
func (s *Store) stageJSON(ctx context.Context, conn *sql.Conn, stage string, ordinal int, src TableSource) (tallied, bool, error) {
	read, ok := s.jsonRead(src)
	if !ok {
		return tallied{}, false, nil
	}
	width := len(src.JSON.Keys)
	if _, err := conn.ExecContext(ctx, `CREATE OR REPLACE TEMP TABLE `+ducksql.Ident(stage)+` AS SELECT * FROM `+read); err != nil {
		return tallied{}, false, readerRefused(ctx, err, ordinal)
	}
	st := tallied{width: width}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+ducksql.Ident(stage)).Scan(&st.rows); err != nil {
		return tallied{}, false, classify(ctx, err)
	}
	var err error
	if st.cols, err = classifyStaged(ctx, conn, stage, width); err != nil {
		return tallied{}, false, err
	}
	return st, true, nil
}
