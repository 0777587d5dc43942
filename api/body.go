package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
)

// maxJSONBody bounds small JSON request bodies such as sign-in.
const maxJSONBody = 64 << 10

// bodyInMemory is the largest tool call body kept in memory while the call
// runs; a larger one is kept in a file (spoolBody).
const bodyInMemory = 1 << 20

// spooledBody is a request body kept where it can be read again and
// again: in memory when it is small, else in a file.
type spooledBody struct {
	*io.SectionReader
	file *os.File
	// release gives back the body's turn (Server.spool).
	release func()
}

// Close lets the body go; a file's space is freed.
func (b *spooledBody) Close() error {
	if b.release != nil {
		b.release()
	}
	if b.file == nil {
		return nil
	}
	return b.file.Close()
}

// spool keeps a tool call's body (spoolBody). A body that may pass
// bodyInMemory first takes one of the node's and the caller's turns for
// large bodies, held until it is closed, and every body is dropped once
// it sends nothing for bodyIdle.
func (s *Server) spool(c *echo.Context, user string) (*spooledBody, error) {
	r := c.Request()
	var release func()
	if r.ContentLength < 0 || r.ContentLength > bodyInMemory {
		var err error
		if release, err = s.bodies.enter(r.Context(), user); err != nil {
			return nil, err
		}
	}
	body, err := spoolBody(s.newIdleBody(c.Response(), r.Body), r.ContentLength, maxToolBody, s.spoolDir())
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	body.release = release
	return body, nil
}

// spoolBody reads a request body of size bytes (-1 when unknown) and at
// most limit: into memory when it has at most bodyInMemory, else into a
// file in dir, removed from dir as soon as it is made (it lives while it
// is open), so that a call of many rows is not held in memory while it is
// checked, typed, written and loaded, each a pass over its rows.
// Errors: invalid (the body could not be read), too_large.
func spoolBody(body io.Reader, size, limit int64, dir string) (*spooledBody, error) {
	in := &readFailure{r: io.LimitReader(body, limit+1)}
	var head bytes.Buffer
	if size <= bodyInMemory {
		if size > 0 {
			head.Grow(int(size) + bytes.MinRead)
		}
		n, err := head.ReadFrom(io.LimitReader(in, bodyInMemory+1))
		if err != nil {
			return nil, unreadable(err)
		}
		if n > limit {
			return nil, tooLargeBody(limit)
		}
		if n <= bodyInMemory {
			return &spooledBody{SectionReader: io.NewSectionReader(bytes.NewReader(head.Bytes()), 0, n)}, nil
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	fh, err := os.CreateTemp(dir, "body-*")
	if engine.NoSpace(err) {
		return nil, engine.NoSpaceError(err)
	}
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	if err := os.Remove(fh.Name()); err != nil {
		fh.Close()
		return nil, fmt.Errorf("api: %w", err)
	}
	n, err := io.Copy(fh, io.MultiReader(&head, in))
	switch {
	case in.err != nil:
		err = unreadable(in.err)
	case engine.NoSpace(err):
		err = engine.NoSpaceError(err)
	case err != nil:
		err = fmt.Errorf("api: keeping a request body: %w", err)
	case n > limit:
		err = tooLargeBody(limit)
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return &spooledBody{SectionReader: io.NewSectionReader(fh, 0, n), file: fh}, nil
}

// readFailure remembers a reader's error other than the end.
type readFailure struct {
	r   io.Reader
	err error
}

func (r *readFailure) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

func tooLargeBody(limit int64) error {
	return datadesk.Errorf(datadesk.TooLarge, "the request body is larger than %d bytes", limit)
}

func unreadable(err error) error {
	return datadesk.Errorf(datadesk.Invalid, "the request body could not be read").WithCause(err)
}

// decodeJSON reads one JSON object into dst, refusing unknown keys.
// Errors: invalid, naming the key and the shape it takes.
func decodeJSON(body io.Reader, dst any) error {
	dec := json.NewDecoder(io.LimitReader(body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonBodyError(err, dst, "the body")
	}
	return nil
}

// jsonBodyError explains why a JSON body did not fit dst in the API's words:
// which key, and what shape it takes. A decoder's own message names Go
// types and never reaches the client.
func jsonBodyError(err error, dst any, what string) *datadesk.Error {
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

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
