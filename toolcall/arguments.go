package toolcall

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"datadesk"
)

// Arguments are a call's arguments, read once from the JSON they came as:
// each argument's JSON as sent, and the same decoded once into plain values
// (numbers kept exact) for the schema and the policy's attributes. The
// tools bind their typed arguments from the JSON (bind), and the audit
// hashes it; nothing is encoded again. A rows argument that is a list stays
// where it lies, read a row at a time (RowsArgument).
type Arguments struct {
	values map[string]any
	raw    map[string]json.RawMessage
	rows   *Rows
	object []byte
	// canon is object in canonical form, once asked for (canonical).
	canon []byte
}

func newArguments() *Arguments {
	return &Arguments{values: map[string]any{}, raw: map[string]json.RawMessage{}}
}

// Get returns the argument key as decoded, or nil.
func (a *Arguments) Get(key string) any { return a.values[key] }

// SetRows makes rows the call's rows argument, in place of what the call
// sent under that key.
func (a *Arguments) SetRows(rows *Rows) {
	delete(a.raw, RowsArgument)
	a.values[RowsArgument], a.rows, a.object, a.canon = rows, rows, nil, nil
}

// add keeps one argument: its value and the JSON it was decoded from. A
// key sent twice keeps its last value, as a decoder into a map does.
func (a *Arguments) add(key string, v any, raw json.RawMessage) {
	if key == RowsArgument {
		a.rows = nil
	}
	a.values[key], a.raw[key] = v, raw
}

// withRows keeps a list of rows as the rows argument, left where it lies.
func (a *Arguments) withRows(rows *Rows) {
	delete(a.raw, RowsArgument)
	a.values[RowsArgument], a.rows = rows, rows
}

// json is the arguments but a rows list as one JSON object, its keys in
// order: what the tools bind and the audit hashes.
func (a *Arguments) json() []byte {
	if a.object == nil {
		a.object = appendObject(nil, a.raw, nil)
	}
	return a.object
}

// canonical is json in canonical form (canonicalJSON), made once: the
// audit's hash and the answers' cache both key on it.
func (a *Arguments) canonical() ([]byte, error) {
	if a.canon == nil {
		b, err := canonicalJSON(a.json())
		if err != nil {
			return nil, err
		}
		a.canon = b
	}
	return a.canon, nil
}

// appendObject appends to b the object of raw's members in key order,
// with rows, when given, as the rows argument.
func appendObject(b []byte, raw map[string]json.RawMessage, rows []byte) []byte {
	keys := make([]string, 0, len(raw)+1)
	for k := range raw {
		keys = append(keys, k)
	}
	if rows != nil {
		keys = append(keys, RowsArgument)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if k == RowsArgument && rows != nil {
			b = append(b, rows...)
			continue
		}
		b = append(b, raw[k]...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			// Escapes, HTML's characters and all but ASCII: encoding/json's
			// own way.
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// DecodeArguments reads {"arguments": {...}} from body, keeping numbers
// exact; the rows argument stays in body, read from there a row at a time
// (RowsArgument). Errors: invalid.
func DecodeArguments(body *io.SectionReader) (*Arguments, error) {
	dec := NewDecoder(body)
	var args *Arguments
	var unknown string
	err := ReadObject(dec, false, func(key string) error {
		if key != "arguments" {
			unknown = cmp.Or(unknown, key)
			return ReadValue(dec, new(json.RawMessage))
		}
		var err error
		args, err = readArguments(dec, body)
		return err
	})
	if err == nil {
		err = AtEnd(dec)
	}
	var known *datadesk.Error
	switch {
	case errors.As(err, &known):
		return nil, known
	case errors.Is(err, errNotJSON):
		return nil, datadesk.Errorf(datadesk.Invalid, "the body must be one JSON object {\"arguments\": {...}}").WithField("arguments").WithCause(err)
	case err != nil:
		return nil, err
	case unknown != "":
		return nil, datadesk.Errorf(datadesk.Invalid, "unknown body key %q; the body is {\"arguments\": {...}}", unknown).WithField(unknown).WithAllowed("arguments")
	}
	if args == nil {
		args = newArguments()
	}
	return args, nil
}

// DecodeArgumentObject reads a call's arguments, a JSON object (absent or
// null for none), numbers kept exact; the rows argument stays JSON, read
// a row at a time (RowsArgument). Errors: invalid.
func DecodeArgumentObject(raw []byte) (*Arguments, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return newArguments(), nil
	}
	src := bytes.NewReader(raw)
	dec := NewDecoder(src)
	args, err := readArguments(dec, src)
	if err == nil {
		err = AtEnd(dec)
	}
	if errors.Is(err, errNotJSON) {
		return nil, notArguments(err)
	}
	return args, err
}

// readArguments reads the arguments object next in dec from src (null for
// none); a rows argument that is a list stays in src (ReadRows). Errors:
// invalid when it is not an object, errNotJSON when it is not JSON.
func readArguments(dec *json.Decoder, src io.ReaderAt) (*Arguments, error) {
	args := newArguments()
	err := ReadObject(dec, true, func(key string) error {
		if key == RowsArgument && NextByte(dec, src) == '[' {
			rows, err := ReadRows(dec, src)
			if err == nil {
				args.withRows(rows)
			}
			return err
		}
		// The value decoded once, and its JSON read back from where it lies.
		start := dec.InputOffset()
		var v any
		if err := ReadValue(dec, &v); err != nil {
			return err
		}
		raw := make([]byte, dec.InputOffset()-start)
		if _, err := src.ReadAt(raw, start); err != nil {
			return fmt.Errorf("toolcall: reading arguments: %w", err)
		}
		args.add(key, v, bytes.TrimLeft(raw, " \t\r\n:"))
		return nil
	})
	if errors.Is(err, errNotObject) {
		return nil, notArguments(err)
	}
	return args, err
}

// notArguments says that arguments were not a JSON object.
func notArguments(err error) error {
	return datadesk.Errorf(datadesk.Invalid, "arguments must be a JSON object").WithField("arguments").WithCause(err)
}

// maxArgumentDepth bounds how deep a call's arguments nest: the deepest
// the schemas allow (analysis filters in groups two levels down) is 9.
// Typed decoding of nested filters costs the size times the depth, so a
// small body nested a thousand levels took 0.3 s before being refused.
const maxArgumentDepth = 24

// argumentDepth is how deep v nests, counting objects and lists; it stops
// counting past limit.
func argumentDepth(v any, limit int) int {
	if limit <= 0 {
		return 1
	}
	deepest := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			deepest = max(deepest, argumentDepth(e, limit-1))
		}
	case []any:
		for _, e := range x {
			deepest = max(deepest, argumentDepth(e, limit-1))
		}
	default:
		return 0
	}
	return deepest + 1
}

// bind decodes validated arguments, but a rows list, into a typed struct
// from the JSON they came as; numbers stay json.Number wherever the struct
// holds any. Errors: invalid (nested past maxArgumentDepth).
func (a *Arguments) bind(dst any) error {
	return bindJSON(a.values, a.json(), dst)
}

// bindArgument decodes the one argument key into dst, as bind does; dst
// stays as it is when the argument is absent.
func (a *Arguments) bindArgument(key string, dst any) error {
	raw, ok := a.raw[key]
	if !ok {
		return nil
	}
	return bindJSON(a.values[key], raw, dst)
}

// bindJSON decodes raw, which decoded is v, into dst. Errors: invalid.
func bindJSON(v any, raw []byte, dst any) error {
	if argumentDepth(v, maxArgumentDepth+1) > maxArgumentDepth {
		return datadesk.Errorf(datadesk.Invalid, "the arguments nest more than %d levels deep; filters nest at most two groups", maxArgumentDepth).
			WithField("arguments")
	}
	dec := NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(dst); err != nil {
		return DecodeError(err, dst, "arguments")
	}
	return nil
}

// maxJSONBody bounds small JSON request bodies: a sign-in, labels, a
// file read again.
const maxJSONBody = 64 << 10

// DecodeBody reads one JSON object of at most maxJSONBody bytes into dst,
// refusing unknown keys. Errors: invalid, naming the key and the shape it
// takes.
func DecodeBody(body io.Reader, dst any) error {
	dec := json.NewDecoder(io.LimitReader(body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return DecodeError(err, dst, "the body")
	}
	return nil
}

// DecodeError explains why a JSON body did not fit dst in the API's words:
// which key, and what shape it takes. A decoder's own message names Go
// types and never reaches the client.
func DecodeError(err error, dst any, what string) *datadesk.Error {
	if e := (*datadesk.Error)(nil); errors.As(err, &e) {
		// A type's own check, worded already.
		return e
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		subject := typeErr.Field
		if ft := fieldType(reflect.TypeOf(dst), typeErr.Field); ft != nil && ft != typeErr.Type &&
			(ft.Kind() == reflect.Map || ft.Kind() == reflect.Slice) && ft.Elem() == typeErr.Type {
			// The decoder names the list or object whose item was wrong.
			subject = "each item of " + typeErr.Field
		}
		return datadesk.Errorf(datadesk.Invalid, "%s must be %s, not %s", subject, shapeOf(typeErr.Type), jsonKind(typeErr.Value)).
			WithField(typeErr.Field).WithCause(err)
	case errors.As(err, &typeErr):
		return datadesk.Errorf(datadesk.Invalid, "%s must be %s, not %s", what, shapeOf(typeErr.Type), jsonKind(typeErr.Value)).WithCause(err)
	case errors.As(err, &syntaxErr):
		return datadesk.Errorf(datadesk.Invalid, "%s is not valid JSON (at byte %d)", what, syntaxErr.Offset).WithCause(err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return datadesk.Errorf(datadesk.Invalid, "%s is empty or cut short; send a JSON object", what).WithCause(err)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		key = strings.Trim(key, `"`)
		keys := jsonKeys(reflect.TypeOf(dst))
		return datadesk.Errorf(datadesk.Invalid, "unknown key %q in %s; keys: %s", key, what, strings.Join(keys, ", ")).
			WithField(key).WithAllowed(keys...).WithCause(err)
	}
	return datadesk.Errorf(datadesk.Invalid, "%s must be a JSON object", what).WithCause(err)
}

// jsonKind names the JSON kind a type error found ("string", "number"...).
func jsonKind(v string) string {
	switch {
	case v == "":
		return "that"
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "array", v == "object", v == "string", v == "bool":
		return map[string]string{"array": "a list", "object": "an object", "string": "text", "bool": "true or false"}[v]
	}
	return v
}

// shapeOf says in JSON terms what a Go type takes.
func shapeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return shapeOf(t.Elem())
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + plural(shapeOf(t.Elem()))
	case reflect.Map:
		return "an object of " + plural(shapeOf(t.Elem()))
	case reflect.Struct:
		if keys := jsonKeys(t); len(keys) > 0 {
			return "an object with keys " + strings.Join(keys, ", ")
		}
		return "an object"
	}
	return "a JSON value"
}

func plural(shape string) string {
	switch {
	case shape == "text":
		return "texts"
	case shape == "true or false":
		return "true or false values"
	case strings.HasPrefix(shape, "a list of "):
		return "lists of " + strings.TrimPrefix(shape, "a list of ")
	case strings.HasPrefix(shape, "an object"):
		return "objects" + strings.TrimPrefix(shape, "an object")
	case strings.HasPrefix(shape, "a "):
		return strings.TrimPrefix(shape, "a ") + "s"
	}
	return shape
}

// fieldType is the type of the struct field at a dotted JSON key path, or
// nil.
func fieldType(t reflect.Type, path string) reflect.Type {
	for _, key := range strings.Split(path, ".") {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return nil
		}
		var next reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			if f.IsExported() && name == key {
				next = f.Type
			}
		}
		t = next
	}
	return t
}

// jsonKeys lists the JSON keys of a struct type.
func jsonKeys(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// stored is the arguments as one JSON object, the rows list among them, for
// a call kept until a person decides it.
func (a *Arguments) stored() ([]byte, error) {
	var rows []byte
	if a.rows != nil {
		var err error
		if rows, err = io.ReadAll(a.rows.reader()); err != nil {
			return nil, fmt.Errorf("toolcall: %w", err)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, appendObject(nil, a.raw, rows)); err != nil {
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	return b.Bytes(), nil
}

// canonicalJSON is the JSON value raw in one form whatever the order of
// its objects' keys: keys sorted, a key sent twice kept once (its last
// value), no space, strings and numbers written as encoding/json writes
// them. Errors: raw is not JSON.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := NewDecoder(bytes.NewReader(raw))
	return appendCanonical(nil, dec)
}

func appendCanonical(b []byte, dec *json.Decoder) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			b = append(b, '[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b = append(b, ',')
				}
				if b, err = appendCanonical(b, dec); err != nil {
					return nil, err
				}
			}
			_, err = dec.Token()
			return append(b, ']'), err
		}
		members := map[string][]byte{}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := appendCanonical(nil, dec)
			if err != nil {
				return nil, err
			}
			members[key.(string)] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(members)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, k), ':')
			b = append(b, members[k]...)
		}
		return append(b, '}'), nil
	case string:
		return appendString(b, t), nil
	case json.Number:
		return append(b, t...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	}
	return append(b, "null"...), nil
}

// Values are the arguments as decoded, the rows list as *Rows; the
// caller must not change them.
func (a *Arguments) Values() map[string]any { return a.values }
