package toolcall

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// RowsArgument is the argument that carries a table's rows. It is kept as
// the JSON it came as and read a row at a time, so that a call of many
// rows is never held as Go values (each of which takes several times its
// JSON): files.create and a declared table go through it several times,
// to type, write and load their rows.
const RowsArgument = "rows"

// errNotJSON marks a body or argument that is not valid JSON, and
// errNotObject one that is not an object where one is expected; callers
// word the error.
var (
	errNotJSON   = errors.New("toolcall: not valid JSON")
	errNotObject = fmt.Errorf("%w: not an object", errNotJSON)
)

// NewDecoder returns a decoder of the JSON in src that keeps numbers exact.
func NewDecoder(src io.Reader) *json.Decoder {
	dec := json.NewDecoder(src)
	dec.UseNumber()
	return dec
}

// ReadObject reads the JSON object next in dec, calling member with each
// key for it to read the key's value from dec. A value of null is read as
// no members when null is allowed. Errors: errNotObject, errNotJSON
// wrapping the decoder's, or member's.
func ReadObject(dec *json.Decoder, null bool, member func(key string) error) error {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return notJSON(err)
	case tok == nil && null:
		return nil
	case tok != json.Delim('{'):
		return errNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return notJSON(err)
		}
		if err := member(tok.(string)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return notJSON(err)
	}
	return nil
}

// ReadValue reads the JSON value next in dec into dst. Errors: errNotJSON
// wrapping the decoder's.
func ReadValue(dec *json.Decoder, dst any) error {
	if err := dec.Decode(dst); err != nil {
		return notJSON(err)
	}
	return nil
}

// AtEnd checks that nothing but white space follows what dec has read.
// Errors: errNotJSON.
func AtEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return notJSON(err)
	}
	return nil
}

// notJSON marks a decoder's error as the input's fault, unless it is the
// reader's own.
func notJSON(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if err == nil {
		return errNotJSON
	}
	if errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", errNotJSON, err)
	}
	return fmt.Errorf("toolcall: reading a body: %w", err)
}

// NextByte returns the first byte of the value that follows what dec has
// read from src (past white space and a key's colon), or 0 at the end.
func NextByte(dec *json.Decoder, src io.ReaderAt) byte {
	var buf [64]byte
	for off := dec.InputOffset(); ; {
		n, err := src.ReadAt(buf[:], off)
		for _, c := range buf[:n] {
			switch c {
			case ' ', '\t', '\n', '\r', ':':
				continue
			}
			return c
		}
		if err != nil || n == 0 {
			return 0
		}
		off += int64(n)
	}
}

// ReadRows reads a JSON array of rows next in dec from src, checking each
// row is JSON without keeping it, and returns the rows as the part of src
// that holds them. Errors: errNotJSON.
func ReadRows(dec *json.Decoder, src io.ReaderAt) (*Rows, error) {
	if _, err := dec.Token(); err != nil {
		return nil, notJSON(err)
	}
	start := dec.InputOffset() - 1
	n := 0
	var row json.RawMessage
	for dec.More() {
		if err := dec.Decode(&row); err != nil {
			return nil, notJSON(err)
		}
		n++
	}
	if _, err := dec.Token(); err != nil {
		return nil, notJSON(err)
	}
	return &Rows{src: io.NewSectionReader(src, start, dec.InputOffset()-start), n: n}, nil
}

// RowList is a list of rows read one at a time.
type RowList interface {
	// Len returns the number of rows.
	Len() int
	// Each calls fn with each row in order, decoded with numbers kept
	// exact, until fn returns an error.
	Each(fn func(i int, row any) error) error
}

// Rows are rows as a JSON array, read from where the call's body is
// kept (in memory or in a file) each time they are gone through.
type Rows struct {
	src *io.SectionReader // the array, from [ to ]
	n   int
}

// NoRows are an empty list of rows.
func NoRows() *Rows { return &Rows{src: io.NewSectionReader(strings.NewReader("[]"), 0, 2)} }

func (r *Rows) Len() int { return r.n }

// Span is where the rows lie in the body they were read from: their
// offset and length in bytes.
func (r *Rows) Span() (off, n int64) {
	_, off, n = r.src.Outer()
	return off, n
}

// size is the rows' JSON's length in bytes.
func (r *Rows) size() int64 { return r.src.Size() }

// reader reads the rows' JSON from its start.
func (r *Rows) reader() io.Reader { return io.NewSectionReader(r.src, 0, r.src.Size()) }

func (r *Rows) Each(fn func(i int, row any) error) error {
	dec := NewDecoder(r.reader())
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("toolcall: rows: %w", err)
	}
	for i := 0; dec.More(); i++ {
		var row any
		if err := dec.Decode(&row); err != nil {
			return fmt.Errorf("toolcall: rows: %w", err)
		}
		if err := fn(i, row); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes the rows as they came.
func (r *Rows) MarshalJSON() ([]byte, error) { return io.ReadAll(r.reader()) }

// chars counts the characters of the rows as compact JSON, without
// building it.
func (r *Rows) chars() (int, error) {
	in := bufio.NewReader(r.reader())
	n, inString, escaped := 0, false, false
	for {
		c, _, err := in.ReadRune()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("toolcall: rows: %w", err)
		}
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
}

// CountItems counts the items of the JSON array in src without holding
// them; ok is false when src holds no array. An array broken off is
// counted up to the break.
func CountItems(src *io.SectionReader) (n int, ok bool) {
	dec := NewDecoder(io.NewSectionReader(src, 0, src.Size()))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return 0, false
	}
	for dec.More() {
		if err := dec.Decode(new(json.RawMessage)); err != nil {
			return n, n > 0
		}
		n++
	}
	return n, true
}

// RawKind names the kind of a JSON value as a message says it.
func RawKind(raw []byte) string {
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
func rowsArg(args map[string]any) RowList {
	switch r := args[RowsArgument].(type) {
	case RowList:
		return r
	case []any:
		return sliceRows(r)
	}
	return nil
}
