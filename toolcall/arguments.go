package toolcall

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"datadesk"
)

// DecodeArguments reads {"arguments": {...}} from body, keeping numbers
// exact; the rows argument stays in body, read from there a row at a time
// (RowsArgument). Errors: invalid.
func DecodeArguments(body *io.SectionReader) (map[string]any, error) {
	dec := NewDecoder(body)
	var args map[string]any
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
		args = map[string]any{}
	}
	return args, nil
}

// DecodeArgumentObject reads a call's arguments, a JSON object (absent or
// null for none), numbers kept exact; the rows argument stays JSON, read
// a row at a time (RowsArgument). Errors: invalid.
func DecodeArgumentObject(raw []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
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
func readArguments(dec *json.Decoder, src io.ReaderAt) (map[string]any, error) {
	args := map[string]any{}
	err := ReadObject(dec, true, func(key string) error {
		if key == RowsArgument && NextByte(dec, src) == '[' {
			rows, err := ReadRows(dec, src)
			args[key] = rows
			return err
		}
		var v any
		err := ReadValue(dec, &v)
		args[key] = v
		return err
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

// bindArguments copies validated arguments into a typed struct; numbers
// stay json.Number wherever the struct holds any. Errors: invalid (nested
// past maxArgumentDepth).
func bindArguments(args map[string]any, dst any) error {
	if argumentDepth(args, maxArgumentDepth+1) > maxArgumentDepth {
		return datadesk.Errorf(datadesk.Invalid, "the arguments nest more than %d levels deep; filters nest at most two groups", maxArgumentDepth).
			WithField("arguments")
	}
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("toolcall: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
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
