package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"datadesk"
	"datadesk/engine"
	"datadesk/exports"
)

// createArgs are files.create's arguments.
type createArgs struct {
	Filename     string   `json:"filename"`
	Content      *string  `json:"content"`
	FileIDs      []string `json:"file_ids"`
	Columns      []any    `json:"columns"`
	Rows         []any    `json:"rows"`
	SourceFileID string   `json:"source_file_id"`
	Title        string   `json:"title"`
}

// The formats each form of files.create makes, by extension.
var (
	contentExts = []string{".txt", ".md", ".csv", ".json", ".docx"}
	tableExts   = []string{".xlsx", ".csv", ".json"}
	zipExts     = []string{".zip"}
)

var extContentTypes = map[string]string{
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/markdown; charset=utf-8",
	".csv":  "text/csv; charset=utf-8",
	".json": "application/json",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".zip":  "application/zip",
}

func hasExt(exts []string, ext string) bool {
	for _, e := range exts {
		if e == ext {
			return true
		}
	}
	return false
}

// toolFilesCreate runs files.create. The extension of filename picks the
// format; exactly one of content, file_ids, columns with rows, or
// source_file_id says what goes in it. The answer describes the file, never
// its data.
func (s *Server) toolFilesCreate(call *toolCall, args map[string]any) (any, error) {
	var a createArgs
	if err := bindArguments(args, &a); err != nil {
		return nil, err
	}
	filename, err := cleanFilename(a.Filename)
	if err != nil {
		return nil, datadesk.AsError(err).WithField("filename")
	}
	ext := strings.ToLower(filepath.Ext(filename))
	forms := 0
	for _, given := range []bool{a.Content != nil, a.FileIDs != nil, a.Columns != nil || a.Rows != nil, a.SourceFileID != ""} {
		if given {
			forms++
		}
	}
	if forms != 1 {
		return nil, datadesk.Errorf(datadesk.Invalid,
			"give exactly one of content, file_ids, columns with rows, or source_file_id").WithField("arguments").
			WithAllowed("content", "file_ids", "columns+rows", "source_file_id")
	}
	wrongExt := func(form string, allowed []string) error {
		return datadesk.Errorf(datadesk.Invalid, "filename %q: %s makes %s files, chosen by the extension", filename, form, strings.Join(allowed, ", ")).
			WithField("filename").WithAllowed(allowed...)
	}
	store, release, err := s.storeOf(call.ctx, call.caller.UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx := call.ctx

	var nf engine.NewFile
	var write func(io.Writer) error
	switch {
	case a.Content != nil:
		if !hasExt(contentExts, ext) {
			return nil, wrongExt("content", contentExts)
		}
		content := *a.Content
		write = func(w io.Writer) error {
			if ext == ".docx" {
				return exports.WriteDOCX(w, a.Title, content)
			}
			_, err := io.WriteString(w, content)
			return err
		}
	case a.FileIDs != nil:
		if !hasExt(zipExts, ext) {
			return nil, wrongExt("file_ids", zipExts)
		}
		entries, err := s.zipEntries(ctx, store, a.FileIDs)
		if err != nil {
			return nil, err
		}
		write = func(w io.Writer) error { return exports.WriteZIP(w, entries) }
	case a.SourceFileID != "":
		if !hasExt(tableExts, ext) {
			return nil, wrongExt("source_file_id", tableExts)
		}
		src, err := store.Table(ctx, a.SourceFileID)
		if err != nil {
			return nil, datadesk.AsError(fileIDError(ctx, store, "source_file_id", a.SourceFileID, err)).WithField("source_file_id")
		}
		nf.CopyOf = src.ID
		source, err := tableSource(ctx, store, src)
		if err != nil {
			return nil, err
		}
		write = func(w io.Writer) error { return writeTable(w, ext, source, a.Title) }
	default:
		if !hasExt(tableExts, ext) {
			return nil, wrongExt("columns and rows", tableExts)
		}
		tbl, err := buildTable(a.Columns, a.Rows, ext == ".xlsx")
		if err != nil {
			return nil, err
		}
		nf.Tables = []engine.TableSource{tbl.source(strings.TrimSuffix(filename, filepath.Ext(filename)))}
		write = func(w io.Writer) error { return writeTable(w, ext, tbl.exportSource(), a.Title) }
	}

	tmp, err := s.writeTemp(store.IncomingDir(), write)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	nf.Filename, nf.ContentType, nf.ChatSession, nf.TempPath = filename, extContentTypes[ext], call.caller.ChatSession, tmp
	if a.Content != nil && (ext == ".csv" || ext == ".json") {
		// CSV and JSON content become tables, like uploads, when they are
		// tables; JSON that is not stays a plain file.
		res, err := s.ingest.Read(ctx, tmp, filename, store.IncomingDir())
		switch {
		case err == nil:
			defer res.Close()
			nf.Tables = res.Tables
		case ext == ".json" && json.Valid([]byte(*a.Content)):
		default:
			return nil, datadesk.AsError(err).WithField("content")
		}
	}
	f, err := store.AddFile(ctx, nf)
	if err != nil {
		return nil, err
	}
	return map[string]any{"file": s.describe(call.caller.UserID, f)}, nil
}

// writeTemp writes a new file in dir and syncs it.
func (s *Server) writeTemp(dir string, write func(io.Writer) error) (string, error) {
	fh, err := os.CreateTemp(dir, "create-*")
	if err != nil {
		return "", fmt.Errorf("api: %w", err)
	}
	err = write(fh)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(fh.Name())
		return "", err
	}
	return fh.Name(), nil
}

func writeTable(w io.Writer, ext string, src exports.Source, title string) error {
	var err error
	switch ext {
	case ".xlsx":
		_, err = exports.WriteXLSX(w, src, exports.Options{SheetName: title})
	case ".csv":
		_, err = exports.WriteCSV(w, src, exports.Options{})
	case ".json":
		_, err = exports.WriteJSON(w, src)
	}
	return err
}

// zipEntries resolves owned file ids; another owner's id is not found.
func (s *Server) zipEntries(ctx context.Context, store *engine.Store, ids []string) ([]exports.ZipEntry, error) {
	var out []exports.ZipEntry
	for i, id := range ids {
		f, err := store.File(ctx, id)
		if err != nil {
			field := fmt.Sprintf("file_ids[%d]", i)
			return nil, datadesk.AsError(fileIDError(ctx, store, field, id, err)).WithField(field)
		}
		path := store.BytesPath(f.ID)
		out = append(out, exports.ZipEntry{Name: f.Filename, Modified: f.CreatedAt,
			Open: func() (io.ReadCloser, error) { return os.Open(path) }})
	}
	return out, nil
}

// newTable is a table given as columns and rows, typed.
type newTable struct {
	keys, labels []string
	types        []string // engine types
	text         [][]string
	typed        [][]any
}

var declaredTypes = map[string]string{
	"text": engine.TypeText, "number": engine.TypeDouble, "boolean": engine.TypeBoolean,
	"date": engine.TypeDate, "datetime": engine.TypeTimestamp,
}

// buildTable reads columns and rows, honouring declared types and inferring
// "auto" ones with ingest's rules: JSON strings stay text (or dates), JSON
// numbers become numbers unless they have leading zeros or more than 15
// digits. Errors: invalid, naming the row and column.
func buildTable(columns, rows []any, xlsx bool) (*newTable, error) {
	if len(columns) == 0 {
		return nil, datadesk.Errorf(datadesk.Invalid, "columns are needed with rows").WithField("columns")
	}
	t := &newTable{}
	declared := make([]string, len(columns))
	seen := map[string]bool{}
	for i, c := range columns {
		switch x := c.(type) {
		case string:
			t.labels = append(t.labels, x)
			t.keys = append(t.keys, "")
		case map[string]any:
			key, _ := x["key"].(string)
			label, _ := x["label"].(string)
			if strings.TrimSpace(key) == "" {
				return nil, datadesk.Errorf(datadesk.Invalid, "columns[%d].key must not be empty", i).WithField(fmt.Sprintf("columns[%d].key", i))
			}
			t.labels = append(t.labels, label)
			t.keys = append(t.keys, key)
			if typ, ok := x["type"].(string); ok {
				declared[i] = typ
			}
		}
	}
	derived := engine.ColumnKeys(t.labels)
	for i := range t.keys {
		if t.keys[i] == "" {
			t.keys[i] = derived[i]
		}
		if seen[strings.ToLower(t.keys[i])] {
			return nil, datadesk.Errorf(datadesk.Invalid, "column key %q is used twice (keys compare case-insensitively)", t.keys[i]).
				WithField(fmt.Sprintf("columns[%d]", i))
		}
		seen[strings.ToLower(t.keys[i])] = true
	}
	index := map[string]int{}
	for i := range t.keys {
		index[t.keys[i]] = i
		if _, ok := index[t.labels[i]]; !ok && t.labels[i] != "" {
			index[t.labels[i]] = i
		}
	}
	// Cells as given: JSON values by column.
	cells := make([][]any, len(rows))
	for r, row := range rows {
		vals := make([]any, len(columns))
		switch x := row.(type) {
		case []any:
			if len(x) > len(columns) {
				return nil, datadesk.Errorf(datadesk.Invalid, "rows[%d] has %d values; there are %d columns", r, len(x), len(columns)).
					WithField(fmt.Sprintf("rows[%d]", r))
			}
			copy(vals, x)
		case map[string]any:
			for k, v := range x {
				i, ok := index[k]
				if !ok {
					return nil, datadesk.Errorf(datadesk.Invalid, "rows[%d] has unknown column %q; valid keys: %s", r, k, strings.Join(t.keys, ", ")).
						WithField(fmt.Sprintf("rows[%d].%s", r, k)).WithAllowed(t.keys...)
				}
				vals[i] = v
			}
		}
		cells[r] = vals
	}
	t.types = make([]string, len(columns))
	t.text = make([][]string, len(rows))
	t.typed = make([][]any, len(rows))
	for r := range rows {
		t.text[r] = make([]string, len(columns))
		t.typed[r] = make([]any, len(columns))
	}
	for i := range columns {
		typ := declared[i]
		if typ == "" || typ == "auto" {
			typ = inferDeclared(t.keys[i], cells, i)
		} else {
			typ = declaredTypes[typ]
		}
		if typ == engine.TypeDouble {
			// Numbers are stored exactly: whole numbers as integers, others
			// as decimals where they fit.
			var texts []string
			for r := range cells {
				switch v := cells[r][i].(type) {
				case json.Number:
					texts = append(texts, v.String())
				case string:
					texts = append(texts, strings.TrimSpace(v))
				}
			}
			if ft, _, _ := engine.DecideColumn(t.keys[i], texts, engine.Hint{Type: engine.TypeDouble}); ft != "" {
				typ = ft
			}
		}
		t.types[i] = typ
		for r := range cells {
			text, typed, err := convertCell(cells[r][i], typ)
			field := fmt.Sprintf("rows[%d].%s", r, t.keys[i])
			if err != nil {
				return nil, datadesk.Errorf(datadesk.Invalid, "%s: %v", field, err).WithField(field)
			}
			if xlsx && utf8.RuneCountInString(text) > exports.MaxCellChars {
				return nil, datadesk.Errorf(datadesk.Invalid, "%s has %d characters; an Excel cell holds at most %d",
					field, utf8.RuneCountInString(text), exports.MaxCellChars).WithField(field)
			}
			t.text[r][i], t.typed[r][i] = text, typed
		}
	}
	return t, nil
}

// inferDeclared picks a type for an "auto" column from its JSON values.
func inferDeclared(key string, cells [][]any, i int) string {
	var strs, nums, bools int
	var texts []string
	for r := range cells {
		switch v := cells[r][i].(type) {
		case string:
			strs++
			texts = append(texts, v)
		case json.Number:
			nums++
			texts = append(texts, v.String())
		case bool:
			bools++
		}
	}
	switch {
	case strs+nums+bools == 0:
		return engine.TypeText
	case bools > 0 && strs+nums == 0:
		return engine.TypeBoolean
	case bools > 0:
		return engine.TypeText
	}
	typ, _, _ := engine.DecideColumn(key, texts, engine.Hint{NoNumbers: strs > 0})
	return typ
}

// convertCell reads one JSON value as typ: its text form for the table and
// its typed form for the file.
func convertCell(v any, typ string) (string, any, error) {
	if v == nil {
		return "", nil, nil
	}
	text := ""
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = x.String()
	case bool:
		text = strconv.FormatBool(x)
	}
	if typ == engine.TypeText {
		return text, text, nil
	}
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return "", nil, nil
	}
	switch typ {
	case engine.TypeInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return "", nil, fmt.Errorf("%q is not a whole number", text)
		}
		return text, n, nil
	case engine.TypeDecimal, engine.TypeDouble:
		if _, isBool := v.(bool); isBool {
			return "", nil, fmt.Errorf("%s is not a number", text)
		}
		text = strings.TrimSpace(text)
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", nil, fmt.Errorf("%q is not a number", text)
		}
		if typ == engine.TypeDouble && !exactDouble(text, f) {
			// A double column would round it; the caller asked for a
			// number, so it is refused rather than changed.
			return "", nil, fmt.Errorf("%s has more digits than a number keeps (15 to 17 significant digits) and would be stored as %s; declare the column as text to keep it as written",
				text, strconv.FormatFloat(f, 'g', -1, 64))
		}
		// The file carries the number as written, so 1.50 keeps its
		// scale; forms JSON has no number for (+5, .5) are rewritten.
		if !json.Valid([]byte(text)) {
			return text, json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
		}
		return text, json.Number(text), nil
	case engine.TypeBoolean:
		if !strings.EqualFold(text, "true") && !strings.EqualFold(text, "false") {
			return "", nil, fmt.Errorf("%q is not true or false", text)
		}
		return strings.ToLower(text), strings.EqualFold(text, "true"), nil
	case engine.TypeDate:
		d, err := time.Parse("2006-01-02", text)
		if err != nil {
			return "", nil, fmt.Errorf("%q is not a date (YYYY-MM-DD)", text)
		}
		return text, d, nil
	case engine.TypeTimestamp:
		d, err := parseDatetime(text)
		if err != nil {
			return "", nil, err
		}
		return d.Format("2006-01-02 15:04:05.999999"), d, nil
	}
	return text, text, nil
}

// exactDouble reports whether the double f is the number text says: its
// shortest form is the same number. 0.1 is; 12345678901234567890 is not.
func exactDouble(text string, f float64) bool {
	want, ok := new(big.Rat).SetString(text)
	if !ok {
		return false
	}
	got, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && want.Cmp(got) == 0
}

func (t *newTable) source(name string) engine.TableSource {
	hints := make([]engine.Hint, len(t.types))
	for i, typ := range t.types {
		hints[i] = engine.Hint{Type: typ}
	}
	// A JSON null is an empty cell; "" stays empty text.
	return engine.TableSource{Name: name, Header: t.labels, Keys: t.keys, Hints: hints,
		RowsWithNulls: func(yield func([]string, []bool) error) (engine.RowStats, error) {
			null := make([]bool, len(t.types))
			for r, row := range t.text {
				for i := range null {
					null[i] = t.typed[r][i] == nil
				}
				if err := yield(row, null); err != nil {
					return engine.RowStats{}, err
				}
			}
			return engine.RowStats{}, nil
		}}
}

func (t *newTable) exportSource() exports.Source {
	cols := make([]engine.Column, len(t.keys))
	for i := range cols {
		cols[i] = engine.Column{Key: t.keys[i], Label: t.labels[i], Type: t.types[i]}
	}
	return exports.Source{Columns: cols, Count: int64(len(t.typed)), Rows: func(yield func([]any) error) error {
		for _, r := range t.typed {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}}
}

// datetimeLayouts are the forms a datetime cell may take. Parsing accepts
// fractional seconds after the seconds without a layout saying so.
var datetimeLayouts = []string{
	"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05-0700", "2006-01-02 15:04:05-0700",
	"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02",
}

// parseDatetime reads a datetime cell: ISO 8601 with up to six fractional
// digits of seconds and, optionally, Z or an offset; a time with a zone is
// stored in UTC.
func parseDatetime(text string) (time.Time, error) {
	for _, l := range datetimeLayouts {
		d, err := time.Parse(l, text)
		if err != nil {
			continue
		}
		if d.Truncate(time.Microsecond) != d {
			return time.Time{}, fmt.Errorf("%q has more than six fractional digits of seconds", text)
		}
		return d.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time (YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM])", text)
}
