package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"datadesk"
)

// rowsArgument is the argument that carries a table's rows. It is kept as
// the JSON it came as and read a row at a time, so that a call of many
// rows is never held as Go values (each of which takes several times its
// JSON): files.create and a declared table go through it several times,
// to type, write and load their rows.
const rowsArgument = "rows"

// splitObject returns the members of a JSON object as parts of raw, which
// json.Valid has found well formed: decoding into json.RawMessage would
// copy each. A key given twice keeps its last value, as decoding does.
func splitObject(raw []byte) (map[string][]byte, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	out := map[string][]byte{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return out, true
	}
	for i < len(raw) {
		end := skipValue(raw, i)
		var key string
		if err := json.Unmarshal(raw[i:end], &key); err != nil {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		start := skipSpace(raw, i+1)
		end = skipValue(raw, start)
		out[key] = raw[start:end]
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		return out, i < len(raw) && raw[i] == '}'
	}
	return nil, false
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the well-formed JSON value at raw[i].
func skipValue(raw []byte, i int) int {
	depth, inString, escaped := 0, false, false
	for ; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return i + 1
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// rowList is a list of rows read one at a time.
type rowList interface {
	// Len returns the number of rows.
	Len() int
	// Each calls fn with each row in order, decoded with numbers kept
	// exact, until fn returns an error.
	Each(fn func(i int, row any) error) error
}

// rawRows are rows as a JSON array.
type rawRows struct {
	raw json.RawMessage
	n   int
}

// newRawRows returns the rows of raw, a JSON array. Errors: invalid when it
// is not one.
func newRawRows(raw json.RawMessage) (*rawRows, error) {
	n, ok := countArray(raw)
	if !ok {
		return nil, datadesk.Errorf(datadesk.Invalid, "rows must be a list of rows, not %s", rawKind(raw)).WithField(rowsArgument)
	}
	return &rawRows{raw: raw, n: n}, nil
}

func (r *rawRows) Len() int { return r.n }

func (r *rawRows) Each(fn func(i int, row any) error) error {
	dec := json.NewDecoder(bytes.NewReader(r.raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("api: rows: %w", err)
	}
	for i := 0; dec.More(); i++ {
		var row any
		if err := dec.Decode(&row); err != nil {
			return fmt.Errorf("api: rows: %w", err)
		}
		if err := fn(i, row); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes the rows as they came.
func (r *rawRows) MarshalJSON() ([]byte, error) { return r.raw, nil }

// chars counts the characters of the rows as compact JSON, without
// building it.
func (r *rawRows) chars() int {
	n, inString, escaped := 0, false, false
	for i := 0; i < len(r.raw); {
		c, size := utf8.DecodeRune(r.raw[i:])
		i += size
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		n++
	}
	return n
}

// countArray counts the items of a JSON array, which json.Unmarshal has
// already found well formed, without decoding them.
func countArray(raw []byte) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' {
		return 0, false
	}
	if len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0 {
		return 0, true
	}
	n, depth, inString, escaped := 1, 0, false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
	}
	return n, true
}

// rawKind names the kind of a JSON value as a message says it.
func rawKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "text"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// sliceRows are rows already decoded.
type sliceRows []any

func (r sliceRows) Len() int { return len(r) }

func (r sliceRows) Each(fn func(i int, row any) error) error {
	for i, row := range r {
		if err := fn(i, row); err != nil {
			return err
		}
	}
	return nil
}

// rowsOf returns the rows argument of args, or nil.
func rowsArg(args map[string]any) rowList {
	switch r := args[rowsArgument].(type) {
	case rowList:
		return r
	case []any:
		return sliceRows(r)
	}
	return nil
}
