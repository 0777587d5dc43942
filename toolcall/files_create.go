package toolcall

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
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/rbac"
)

// createArgs are files.create's arguments but its rows, which are read a
// row at a time (rowsOf).
type createArgs struct {
	Filename     string   `json:"filename"`
	Content      *string  `json:"content"`
	FileIDs      []string `json:"file_ids"`
	Columns      []any    `json:"columns"`
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

// filesCreate is files.create: a file of the caller's made from content,
// other files, columns and rows, or a stored table.
type filesCreate struct{}

func (filesCreate) spec() Tool {
	return Tool{Name: "files.create",
		Description: "Create downloadable chat files owned by the current user. TXT/CSV/MD/JSON/DOCX use filename/content; ZIP uses existing owned file_ids. " +
			"For Excel XLSX or an interactive JSON/CSV table, use filename, columns (labels or key/label/type objects), and rows (arrays or objects); " +
			"preserve numbers as numbers and identifiers as strings. Or pass source_file_id of an owned CSV/XLS/XLSX/XLSM/table JSON to copy its data " +
			"internally without resending rows. XLSX opens as an interactive table in chat. Returns real file/download URLs, not the full dataset. " +
			"Does not run on a remote PC.",
		RiskLevel: RiskChange, ApprovalMode: rbac.ApprovalPolicy, Enabled: true}
}

func (filesCreate) run(p *Pipeline, call *toolCall, args *Arguments) (any, error) {
	return p.toolFilesCreate(call, args)
}

// workAttrs are a new file's attributes as its work has them: a copy by
// source_file_id has the source table's rows and columns, a ZIP the sum of
// its members' sizes, CSV or JSON content the rows and columns ingest
// finds in it.
func (filesCreate) workAttrs(ctx context.Context, open func() (*engine.Store, error), in *ingest.Ingester, args *Arguments, a rbac.Attrs) (rbac.Attrs, error) {
	src, _ := args.values["source_file_id"].(string)
	ids, _ := args.values["file_ids"].([]any)
	content, isContent := args.values["content"].(string)
	isContent = isContent && (a.Format == "csv" || a.Format == "json")
	if src == "" && len(ids) == 0 && !isContent {
		return a, nil
	}
	store, err := open()
	if err != nil {
		return a, err
	}
	if isContent {
		rows, cols, err := contentShape(ctx, in, store, content, a.Format)
		if err != nil {
			return a, err
		}
		a.Rows, a.Columns = max(a.Rows, rows), max(a.Columns, cols)
	}
	if src != "" {
		tbl, err := store.Table(ctx, src)
		switch {
		case err == nil:
			a.Rows, a.Columns = int(tbl.RowCount), len(tbl.Columns)
		case !datadesk.IsNotFound(err):
			return a, err
		}
	}
	for _, v := range ids {
		id, _ := v.(string)
		f, err := store.File(ctx, id)
		switch {
		case err == nil:
			a.Bytes += f.Size
		case !datadesk.IsNotFound(err):
			return a, err
		}
	}
	return a, nil
}

func (filesCreate) summaryKeys() []string {
	return []string{"id", "filename", "content_type", "size", "row_count", "column_count"}
}

func (filesCreate) text(r map[string]any, _ int) string {
	if f, ok := r["file"].(map[string]any); ok {
		return fmt.Sprintf("Created %v (%v, %v bytes): download %v", f["filename"], f["id"], f["size"], f["download_url"])
	}
	return "The result is in the structured content."
}

// toolFilesCreate runs files.create. The extension of filename picks the
// format; exactly one of content, file_ids, columns with rows, or
// source_file_id says what goes in it. The answer describes the file, never
// its data.
func (p *Pipeline) toolFilesCreate(call *toolCall, args *Arguments) (any, error) {
	var a createArgs
	if err := args.bind(&a); err != nil {
		return nil, err
	}
	rows := rowsArg(args.values)
	filename, err := datadesk.CleanFilename(a.Filename)
	if err != nil {
		return nil, datadesk.AsError(err).WithField("filename")
	}
	ext := strings.ToLower(filepath.Ext(filename))
	forms := 0
	for _, given := range []bool{a.Content != nil, a.FileIDs != nil, a.Columns != nil || rows != nil, a.SourceFileID != ""} {
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
	store := call.store
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
		entries, err := p.zipEntries(ctx, store, a.FileIDs)
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
		source, err := ExportSource(ctx, store, src)
		if err != nil {
			return nil, err
		}
		write = func(w io.Writer) error { return writeTable(w, ext, source, a.Title) }
	default:
		if !hasExt(tableExts, ext) {
			return nil, wrongExt("columns and rows", tableExts)
		}
		if rows == nil {
			rows = sliceRows{}
		}
		tbl, err := buildTable(a.Columns, rows, ext == ".xlsx")
		if err != nil {
			return nil, err
		}
		nf.Tables = []engine.TableSource{tbl.source(strings.TrimSuffix(filename, filepath.Ext(filename)))}
		write = func(w io.Writer) error { return writeTable(w, ext, tbl.exportSource(), a.Title) }
	}

	tmp, err := WriteTemp(store.IncomingDir(), write)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	nf.Filename, nf.ContentType, nf.ChatSession, nf.TempPath = filename, extContentTypes[ext], call.caller.ChatSession, tmp
	if a.Content != nil && (ext == ".csv" || ext == ".json") {
		// CSV and JSON content become tables, like uploads, when they are
		// tables; JSON that is not stays a plain file.
		res, err := p.ingest.Read(ctx, tmp, filename, store.IncomingDir())
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
	return map[string]any{"file": Describe(p.cfg.Links, call.caller.UserID, f)}, nil
}

// WriteTemp writes a new file in dir; AddFile syncs it while the tables
// load.
func WriteTemp(dir string, write func(io.Writer) error) (string, error) {
	fh, err := os.CreateTemp(dir, "create-*")
	if err != nil {
		if engine.NoSpace(err) {
			return "", engine.NoSpaceError(err)
		}
		return "", fmt.Errorf("toolcall: %w", err)
	}
	err = write(fh)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(fh.Name())
		if engine.NoSpace(err) {
			return "", engine.NoSpaceError(err)
		}
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
func (p *Pipeline) zipEntries(ctx context.Context, store *engine.Store, ids []string) ([]exports.ZipEntry, error) {
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

// newTable is a table given as columns and rows, typed. Its rows stay as
// given and are converted a row at a time (each), as often as they are
// read: to count, to write a file and to load the table.
type newTable struct {
	keys, labels []string
	types        []string // engine types
	index        map[string]int
	rows         RowList
	xlsx         bool
	// counted are the columns' counts over the converted rows, for the
	// engine (engine.TableSource.Counted).
	counted []typing.Stats
}

var declaredTypes = map[string]string{
	"text": typing.TypeText, "number": typing.TypeDouble, "boolean": typing.TypeBoolean,
	"date": typing.TypeDate, "datetime": typing.TypeTimestamp,
}

// buildTable reads columns and rows, honouring declared types and inferring
// "auto" ones with ingest's rules: JSON strings stay text (or dates), JSON
// numbers become numbers unless they have leading zeros or more than 15
// digits. It reads the rows twice, a row at a time: once to type the
// columns, once to check every cell converts and to count the converted
// values. Errors: invalid, naming the row and column.
func buildTable(columns []any, rows RowList, xlsx bool) (*newTable, error) {
	if len(columns) == 0 {
		return nil, datadesk.Errorf(datadesk.Invalid, "columns are needed with rows").WithField("columns")
	}
	t := &newTable{rows: rows, xlsx: xlsx}
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
	derived := typing.ColumnKeys(t.labels)
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
	t.index = map[string]int{}
	for i := range t.keys {
		t.index[t.keys[i]] = i
		if _, ok := t.index[t.labels[i]]; !ok && t.labels[i] != "" {
			t.index[t.labels[i]] = i
		}
	}
	if err := t.decideTypes(declared); err != nil {
		return nil, err
	}
	t.counted = make([]typing.Stats, len(t.keys))
	err := t.each(func(text []string, typed []any) error {
		for i := range text {
			if typed[i] != nil {
				t.counted[i].Add(text[i])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// cells reads row r's JSON values into vals, one per column.
func (t *newTable) cells(r int, row any, vals []any) error {
	clear(vals)
	switch x := row.(type) {
	case []any:
		if len(x) > len(vals) {
			return datadesk.Errorf(datadesk.Invalid, "rows[%d] has %d values; there are %d columns", r, len(x), len(vals)).
				WithField(fmt.Sprintf("rows[%d]", r))
		}
		copy(vals, x)
	case map[string]any:
		for k, v := range x {
			i, ok := t.index[k]
			if !ok {
				return datadesk.Errorf(datadesk.Invalid, "rows[%d] has unknown column %q; valid keys: %s", r, k, strings.Join(t.keys, ", ")).
					WithField(fmt.Sprintf("rows[%d].%s", r, k)).WithAllowed(t.keys...)
			}
			vals[i] = v
		}
	}
	return nil
}

// columnShapes is what typing a column given as JSON counts: the JSON
// types of its values, their texts as ingest would see them, and, for a
// numeric column, their texts trimmed.
type columnShapes struct {
	strs, nums, bools int
	texts, numbers    typing.Stats
}

// decideTypes reads the rows once and gives each column its type: the
// declared one, or the one its values infer for "auto".
func (t *newTable) decideTypes(declared []string) error {
	shapes := make([]columnShapes, len(t.keys))
	vals := make([]any, len(t.keys))
	err := t.rows.Each(func(r int, row any) error {
		if err := t.cells(r, row, vals); err != nil {
			return err
		}
		for i, v := range vals {
			sh := &shapes[i]
			switch x := v.(type) {
			case string:
				sh.strs++
				sh.texts.Add(x)
				sh.numbers.Add(strings.TrimSpace(x))
			case json.Number:
				sh.nums++
				sh.texts.Add(x.String())
				sh.numbers.Add(x.String())
			case bool:
				sh.bools++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.types = make([]string, len(t.keys))
	for i := range t.keys {
		typ := declared[i]
		if typ == "" || typ == "auto" {
			typ = inferDeclared(t.keys[i], &shapes[i])
		} else {
			typ = declaredTypes[typ]
		}
		if typ == typing.TypeDouble {
			// Numbers are stored exactly: whole numbers as integers, others
			// as decimals where they fit.
			if ft := typing.Decide(&shapes[i].numbers, t.keys[i], typing.Hint{Type: typing.TypeDouble}).Type; ft != "" {
				typ = ft
			}
		}
		t.types[i] = typ
	}
	return nil
}

// inferDeclared picks a type for an "auto" column from its JSON values.
func inferDeclared(key string, sh *columnShapes) string {
	switch {
	case sh.strs+sh.nums+sh.bools == 0:
		return typing.TypeText
	case sh.bools > 0 && sh.strs+sh.nums == 0:
		return typing.TypeBoolean
	case sh.bools > 0:
		return typing.TypeText
	}
	typ := typing.Decide(&sh.texts, key, typing.Hint{NoNumbers: sh.strs > 0}).Type
	return typ
}

// each converts the rows one at a time to their text form for the table
// and their typed form for a file, and calls fn with each; fn may not keep
// text or typed, which hold the next row after it returns. Errors:
// invalid, naming the row and column of a value that does not convert.
func (t *newTable) each(fn func(text []string, typed []any) error) error {
	vals := make([]any, len(t.keys))
	text, typed := make([]string, len(t.keys)), make([]any, len(t.keys))
	return t.rows.Each(func(r int, row any) error {
		if err := t.cells(r, row, vals); err != nil {
			return err
		}
		for i, v := range vals {
			s, x, err := convertCell(v, t.types[i])
			if err != nil {
				field := fmt.Sprintf("rows[%d].%s", r, t.keys[i])
				return datadesk.Errorf(datadesk.Invalid, "%s: %v", field, err).WithField(field)
			}
			if t.xlsx && utf8.RuneCountInString(s) > exports.MaxCellChars {
				field := fmt.Sprintf("rows[%d].%s", r, t.keys[i])
				return datadesk.Errorf(datadesk.Invalid, "%s has %d characters; an Excel cell holds at most %d",
					field, utf8.RuneCountInString(s), exports.MaxCellChars).WithField(field)
			}
			text[i], typed[i] = s, x
		}
		return fn(text, typed)
	})
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
	if typ == typing.TypeText {
		return text, text, nil
	}
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return "", nil, nil
	}
	switch typ {
	case typing.TypeInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return "", nil, fmt.Errorf("%q is not a whole number", text)
		}
		return text, n, nil
	case typing.TypeDecimal, typing.TypeDouble:
		if _, isBool := v.(bool); isBool {
			return "", nil, fmt.Errorf("%s is not a number", text)
		}
		text = strings.TrimSpace(text)
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", nil, fmt.Errorf("%q is not a number", text)
		}
		if typ == typing.TypeDouble && !exactDouble(text, f) {
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
	case typing.TypeBoolean:
		if !strings.EqualFold(text, "true") && !strings.EqualFold(text, "false") {
			return "", nil, fmt.Errorf("%q is not true or false", text)
		}
		return strings.ToLower(text), strings.EqualFold(text, "true"), nil
	case typing.TypeDate:
		d, err := time.Parse("2006-01-02", text)
		if err != nil {
			return "", nil, fmt.Errorf("%q is not a date (YYYY-MM-DD)", text)
		}
		return text, d, nil
	case typing.TypeTimestamp:
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
	hints := make([]typing.Hint, len(t.types))
	for i, typ := range t.types {
		hints[i] = typing.Hint{Type: typ}
	}
	// A JSON null is an empty cell; "" stays empty text. Whole numbers go
	// to the table as the int64 they were read as.
	return engine.TableSource{Name: name, Header: t.labels, Keys: t.keys, Hints: hints, Counted: t.counted,
		RowsWithNulls: func(yield func([]string, []bool) error) (engine.RowStats, error) {
			null := make([]bool, len(t.types))
			return engine.RowStats{}, t.each(func(text []string, typed []any) error {
				for i := range null {
					null[i] = typed[i] == nil
				}
				return yield(text, null)
			})
		},
		Typed: func(yield func([]string, []any) error) (engine.RowStats, error) {
			return engine.RowStats{}, t.each(yield)
		}}
}

func (t *newTable) exportSource() exports.Source {
	cols := make([]catalog.Column, len(t.keys))
	for i := range cols {
		cols[i] = catalog.Column{Key: t.keys[i], Label: t.labels[i], Type: t.types[i]}
	}
	return exports.Source{Columns: cols, Count: int64(t.rows.Len()), Rows: func(yield func([]any) error) error {
		return t.each(func(_ []string, typed []any) error { return yield(typed) })
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
