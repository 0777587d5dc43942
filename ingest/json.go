package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/typing"
)

// JSON comes in four shapes: an array of records ([{...}, ...] or, with a
// header array first, [[...], [...]]), NDJSON (one record per line), the
// project's table JSON ({"columns": [...], "rows": [...]}), recognised by
// its first key being "columns" or "rows", and one object that wraps its
// records in one of its keys, as an API answers ({"data": [{...}, ...],
// "count": 2}). Records are read twice: once to learn the columns and what
// kinds of values they hold, once to stream rows.

type jsonShape int

const (
	shapeArray jsonShape = iota
	shapeLines
	shapeTable
	shapeWrapped
)

// jsonLayout is a file's shape and, when its one object wraps its
// records, the key that holds them and the other keys, left out.
type jsonLayout struct {
	shape   jsonShape
	records string
	others  []string
}

// cellKind is what a JSON value was.
type cellKind uint8

const (
	kindNull cellKind = iota
	kindString
	kindNumber
	kindBool
	kindNested
)

type jsonColumn struct {
	key      string
	label    string
	declared string // type from table JSON columns, if any
	kinds    [5]int64
}

func (in *Ingester) jsonSource(path, name string) (engine.TableSource, error) {
	layout, err := jsonShapeOf(path)
	if err != nil {
		return engine.TableSource{}, jsonErr(name, err)
	}
	shape := layout.shape
	var (
		cols    []*jsonColumn
		byKey   = map[string]int{}
		arrays  bool
		records int64
	)
	addCol := func(label string) int {
		if i, ok := byKey[label]; ok {
			return i
		}
		if len(cols) >= engine.MaxColumns {
			return -1
		}
		cols = append(cols, &jsonColumn{label: label})
		byKey[label] = len(cols) - 1
		return len(cols) - 1
	}
	// First pass: columns and kinds, by a scan of the bytes when DuckDB's
	// reader can stage the file, else by the Go reader.
	var flat *flatJSON
	if shape == shapeArray || shape == shapeLines {
		if flat, _, err = scanFlat(path, shape); err != nil {
			return engine.TableSource{}, jsonErr(name, err)
		}
	}
	if flat != nil {
		cols = flat.cols
		for i, c := range cols {
			byKey[c.label] = i
		}
	} else {
		err = walkJSON(path, &layout, func(c []jsonTableColumn) {
			for _, tc := range c {
				i := addCol(tc.Label)
				if i >= 0 {
					cols[i].declared = tc.Type
					if tc.Key != "" {
						// Object rows may name columns by key.
						cols[i].key = tc.Key
						if _, taken := byKey[tc.Key]; !taken {
							byKey[tc.Key] = i
						}
					}
				}
			}
		}, func(rec jsonRecord) error {
			records++
			if rec.keys == nil {
				if (shape == shapeArray || shape == shapeWrapped) && records == 1 && len(cols) == 0 {
					// [[header...], [row...], ...]
					arrays = true
					for j, v := range rec.values {
						label := v.text
						if v.kind != kindString {
							label = fmt.Sprintf("column_%d", j+1)
						}
						cols = append(cols, &jsonColumn{label: label})
					}
					return nil
				}
				for len(cols) < len(rec.values) {
					if len(cols) >= engine.MaxColumns {
						return datadesk.Errorf(datadesk.Invalid, "%s: a record has more than %d values", name, engine.MaxColumns)
					}
					cols = append(cols, &jsonColumn{label: fmt.Sprintf("column_%d", len(cols)+1)})
				}
				for j, v := range rec.values {
					cols[j].kinds[v.kind]++
				}
				return nil
			}
			for j, k := range rec.keys {
				i := addCol(k)
				if i < 0 {
					return datadesk.Errorf(datadesk.Invalid, "%s: records have more than %d distinct keys", name, engine.MaxColumns)
				}
				cols[i].kinds[rec.values[j].kind]++
			}
			return nil
		})
	}
	if err != nil {
		return engine.TableSource{}, jsonErr(name, err)
	}
	if len(cols) == 0 {
		return engine.TableSource{}, datadesk.Errorf(datadesk.Invalid, "%s holds no records", name).WithField("file")
	}
	src := engine.TableSource{Name: name}
	for _, c := range cols {
		src.Header = append(src.Header, c.label)
		h := typing.Hint{}
		switch c.declared {
		case "text":
			h.NoNumbers = true
		case "", "auto":
			// Strings in JSON are text by the writer's choice: "00123" and
			// "123" stay text; dates written as strings may still be dates.
			h.NoNumbers = c.kinds[kindString] > 0 || c.kinds[kindNested] > 0
		}
		src.Hints = append(src.Hints, h)
	}
	src.Keys = declaredKeys(cols)
	if flat != nil {
		src.JSON = &engine.JSONFile{Path: path, Lines: shape == shapeLines, Keys: src.Header, MaxRecord: flat.maxRecord}
	}
	src.Notes = []string{fmt.Sprintf("JSON %s", [...]string{"array of records", "records one per line", "table", "object wrapping records"}[shape])}
	if shape == shapeWrapped {
		note := fmt.Sprintf("records read from %q", layout.records)
		if len(layout.others) > 0 {
			note += "; left out: " + quotedList(layout.others)
		}
		src.Notes = append(src.Notes, note)
	}
	// JSON tells null from "": a null or missing value is an empty cell,
	// an empty string is empty text.
	src.RowsWithNulls = func(yield func(row []string, null []bool) error) (engine.RowStats, error) {
		row := make([]string, len(cols))
		null := make([]bool, len(cols))
		first := true
		rowsLayout := layout
		rowsLayout.others = slices.Clone(layout.others)
		err := walkJSON(path, &rowsLayout, nil, func(rec jsonRecord) error {
			if arrays && first {
				first = false
				return nil
			}
			clear(row)
			for i := range null {
				null[i] = true
			}
			n := 0
			if rec.keys == nil {
				for j, v := range rec.values {
					row[j], null[j] = v.text, v.kind == kindNull
				}
				n = len(rec.values)
			} else {
				for j, k := range rec.keys {
					i := byKey[k]
					row[i], null[i] = rec.values[j].text, rec.values[j].kind == kindNull
				}
				n = len(cols)
			}
			return yield(row[:max(n, 1)], null[:max(n, 1)])
		})
		return engine.RowStats{}, jsonErr(name, err)
	}
	return src, nil
}

// declaredKeys returns the keys a table JSON declares, when every column
// has one and they are unique case-insensitively; otherwise nil, and keys
// come from the labels.
func declaredKeys(cols []*jsonColumn) []string {
	keys := make([]string, len(cols))
	seen := map[string]bool{}
	for i, c := range cols {
		k := strings.ToLower(c.key)
		if c.key == "" || seen[k] || len(c.key) > 64 {
			return nil
		}
		seen[k] = true
		keys[i] = c.key
	}
	return keys
}

func jsonErr(name string, err error) error {
	if err == nil {
		return nil
	}
	var de *datadesk.Error
	if errors.As(err, &de) {
		return err
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return datadesk.Errorf(datadesk.Invalid, "%s is not valid JSON: the text at byte %d is not what JSON allows there", name, se.Offset).WithField("file").WithCause(err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return datadesk.Errorf(datadesk.Invalid, "%s is not valid JSON: it ends too soon", name).WithField("file")
	}
	return datadesk.Errorf(datadesk.Invalid, "%s could not be read as JSON", name).WithField("file").WithCause(err)
}

func jsonShapeOf(path string) (jsonLayout, error) {
	f, err := os.Open(path)
	if err != nil {
		return jsonLayout{}, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	skipBOM(br)
	dec := json.NewDecoder(br)
	tok, err := dec.Token()
	if err == io.EOF {
		return jsonLayout{}, datadesk.Errorf(datadesk.Invalid, "the file is empty")
	}
	if err != nil {
		return jsonLayout{}, err
	}
	switch tok {
	case json.Delim('['):
		return jsonLayout{shape: shapeArray}, nil
	case json.Delim('{'):
		key, err := dec.Token()
		if err != nil {
			return jsonLayout{}, err
		}
		if key == "columns" || key == "rows" {
			return jsonLayout{shape: shapeTable}, nil
		}
		return wrappedLayout(path, dec, key)
	}
	return jsonLayout{}, datadesk.Errorf(datadesk.Invalid, "JSON must be an array of records, records one per line, a table object, or an object that holds an array of records")
}

// wrappedLayout tells a file whose first object wraps its records (a key
// whose value is an array of objects or arrays) from NDJSON, whose first
// record may hold such an array too: the file must hold that one object
// alone. dec has read the object's first key, key. Scalars and objects
// before the records are read and left; the search ends at the first
// array, whatever it holds.
func wrappedLayout(path string, dec *json.Decoder, key json.Token) (jsonLayout, error) {
	lines := jsonLayout{shape: shapeLines}
	var others []string
	for {
		name, ok := key.(string)
		if !ok {
			return lines, nil
		}
		tok, err := dec.Token()
		if err != nil {
			return lines, nil
		}
		if tok == json.Delim('[') {
			next, err := dec.Token()
			if err != nil || (next != json.Delim('{') && next != json.Delim('[')) {
				return lines, nil
			}
			alone, err := oneJSONValue(path)
			if err != nil || !alone {
				return lines, err
			}
			// The keys after the records join others as the first
			// reading passes them (walkJSON).
			return jsonLayout{shape: shapeWrapped, records: name, others: others}, nil
		}
		if tok == json.Delim('{') {
			// An object value: read past it, token by token.
			for depth := 1; depth > 0; {
				t, err := dec.Token()
				if err != nil {
					return lines, nil
				}
				switch t {
				case json.Delim('{'), json.Delim('['):
					depth++
				case json.Delim('}'), json.Delim(']'):
					depth--
				}
			}
		}
		others = append(others, name)
		if !dec.More() {
			return lines, nil
		}
		if key, err = dec.Token(); err != nil {
			return lines, nil
		}
	}
}

func skipBOM(br *bufio.Reader) {
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
}

type jsonValue struct {
	text string
	kind cellKind
}

// jsonRecord is one record: keys and values for objects, values alone for
// arrays.
type jsonRecord struct {
	keys   []string
	values []jsonValue
}

type jsonTableColumn struct {
	Key   string
	Label string
	Type  string
}

// walkJSON streams the records of a file of the given layout; of a
// wrapping object, it adds the keys it leaves out to layout.others.
func walkJSON(path string, layout *jsonLayout, onColumns func([]jsonTableColumn), onRecord func(jsonRecord) error) error {
	shape := layout.shape
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	skipBOM(br)
	dec := json.NewDecoder(br)
	dec.UseNumber()
	readRecords := func() error {
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			rec, err := parseRecord(raw)
			if err != nil {
				return err
			}
			if err := onRecord(rec); err != nil {
				return err
			}
		}
		return nil
	}
	switch shape {
	case shapeLines:
		return readRecords()
	case shapeWrapped:
		return walkWrapped(dec, layout, readRecords)
	case shapeArray:
		if _, err := dec.Token(); err != nil {
			return err
		}
		if err := readRecords(); err != nil {
			return err
		}
		_, err := dec.Token()
		return err
	}
	// Table JSON.
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		switch key {
		case "columns":
			var raw []json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			cols := make([]jsonTableColumn, 0, len(raw))
			for _, r := range raw {
				var c jsonTableColumn
				var s string
				if json.Unmarshal(r, &s) == nil {
					c.Label = s
				} else if err := json.Unmarshal(r, &struct {
					Key   *string `json:"key"`
					Label *string `json:"label"`
					Type  *string `json:"type"`
				}{&c.Key, &c.Label, &c.Type}); err != nil {
					return datadesk.Errorf(datadesk.Invalid, "columns must be labels or {key, label, type} objects")
				}
				if c.Label == "" {
					c.Label = c.Key
				}
				cols = append(cols, c)
			}
			if onColumns != nil {
				onColumns(cols)
			}
		case "rows":
			if err := recordsArray(dec, "rows", readRecords); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkWrapped reads a wrapping object's records by readRecords, and
// past its other keys, noting them in layout.others.
func walkWrapped(dec *json.Decoder, layout *jsonLayout, readRecords func() error) error {
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key == layout.records {
			if err := recordsArray(dec, layout.records, readRecords); err != nil {
				return err
			}
			continue
		}
		if name, _ := key.(string); !slices.Contains(layout.others, name) {
			layout.others = append(layout.others, name)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// recordsArray reads the array of records under key, whose value dec
// is at, by readRecords.
func recordsArray(dec *json.Decoder, key string, readRecords func() error) error {
	if tok, err := dec.Token(); err != nil {
		return err
	} else if tok != json.Delim('[') {
		return datadesk.Errorf(datadesk.Invalid, "%s must be an array", key)
	}
	if err := readRecords(); err != nil {
		return err
	}
	_, err := dec.Token()
	return err
}

// oneJSONValue says whether the file at path holds one JSON value and
// nothing after it but spaces, by its bytes alone: strings (with their
// escapes) are passed over, brackets and braces counted.
func oneJSONValue(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	depth, inString, escaped, ended := 0, false, false, false
	for {
		n, rerr := f.Read(buf)
		for _, b := range buf[:n] {
			switch {
			case ended:
				if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
					return false, nil
				}
			case inString:
				switch {
				case escaped:
					escaped = false
				case b == '\\':
					escaped = true
				case b == '"':
					inString = false
				}
			case b == '"':
				inString = true
			case b == '{' || b == '[':
				depth++
			case b == '}' || b == ']':
				if depth--; depth == 0 {
					ended = true
				}
			}
		}
		if rerr == io.EOF {
			return ended, nil
		}
		if rerr != nil {
			return false, rerr
		}
	}
}

// quotedList is names quoted and joined by commas.
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// parseRecord reads an object (keys in file order) or an array. The
// standard decoder's fast paths read the values; the keys' file order comes
// from one pass over the record's bytes, which refuses a record of more
// than engine.MaxColumns keys as soon as it meets the one too many.
func parseRecord(raw json.RawMessage) (jsonRecord, error) {
	raw = bytes.TrimSpace(raw)
	var rec jsonRecord
	if len(raw) == 0 {
		return rec, datadesk.Errorf(datadesk.Invalid, "each record must be an object or an array, not a single value")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	switch raw[0] {
	case '{':
		keys, err := objectKeys(raw, engine.MaxColumns)
		if err != nil {
			return rec, err
		}
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return rec, err
		}
		rec.keys = keys
		rec.values = make([]jsonValue, len(rec.keys))
		for i, k := range rec.keys {
			rec.values[i] = valueOf(m[k])
		}
	case '[':
		var arr []any
		if err := dec.Decode(&arr); err != nil {
			return rec, err
		}
		rec.values = make([]jsonValue, len(arr))
		for i, v := range arr {
			rec.values[i] = valueOf(v)
		}
	default:
		return rec, datadesk.Errorf(datadesk.Invalid, "each record must be an object or an array, not a single value")
	}
	return rec, nil
}

// objectKeys returns the keys of the JSON object raw (valid JSON, as the
// decoder has read it) in the order each first appears, escapes undone.
// Errors: invalid past max keys, found on the key one too many.
func objectKeys(raw []byte, max int) ([]string, error) {
	var keys []string
	seen := map[string]bool{}
	i := 1 // past the '{'
	for {
		i = skipJSONSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return keys, nil // '}'
		}
		end := stringEnd(raw, i)
		key := string(raw[i+1 : end-1])
		if bytes.IndexByte(raw[i:end], '\\') >= 0 {
			if err := json.Unmarshal(raw[i:end], &key); err != nil {
				return nil, err
			}
		}
		if !seen[key] {
			if len(keys) == max {
				return nil, datadesk.Errorf(datadesk.Invalid, "a record has more than %d keys, the most a table has columns", max).WithField("file")
			}
			seen[key] = true
			keys = append(keys, key)
		}
		i = skipJSONValue(raw, skipJSONSpace(raw, end)+1) // past the ':'
		i = skipJSONSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// skipJSONSpace is the index of the first byte at or after i that is not
// JSON whitespace.
func skipJSONSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the string that starts at raw[i].
func stringEnd(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(raw)
}

// skipJSONValue is the index just past the value that starts at or after
// i: a string, an object or array (strings inside them skipped whole), or
// a number or literal.
func skipJSONValue(raw []byte, i int) int {
	i = skipJSONSpace(raw, i)
	depth := 0
	for i < len(raw) {
		switch raw[i] {
		case '"':
			i = stringEnd(raw, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// valueOf reads a decoded JSON value: numbers exactly as written, nested
// objects and arrays as compact JSON text.
func valueOf(v any) jsonValue {
	switch x := v.(type) {
	case nil:
		return jsonValue{kind: kindNull}
	case string:
		return jsonValue{text: x, kind: kindString}
	case json.Number:
		return jsonValue{text: x.String(), kind: kindNumber}
	case bool:
		return jsonValue{text: strconv.FormatBool(x), kind: kindBool}
	}
	b, _ := json.Marshal(v)
	return jsonValue{text: string(b), kind: kindNested}
}
