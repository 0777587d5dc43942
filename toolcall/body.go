package toolcall

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"datadesk"
	"datadesk/engine"
)

// BodyInMemory is the largest tool call body kept in memory while the call
// runs; a larger one is kept in a file (Spool).
const BodyInMemory = 1 << 20

// Body is a request body kept where it can be read again and again: in
// memory when it is small, else in a file.
type Body struct {
	*io.SectionReader
	file *os.File
	// release is called when the body is closed (OnClose).
	release func()
}

// Spooled reports whether the body is kept in a file.
func (b *Body) Spooled() bool { return b.file != nil }

// OnClose has release called when the body is closed: a turn the body
// took, given back.
func (b *Body) OnClose(release func()) { b.release = release }

// Close lets the body go; a file's space is freed.
func (b *Body) Close() error {
	if b.release != nil {
		b.release()
	}
	if b.file == nil {
		return nil
	}
	return b.file.Close()
}

// Spool reads a request body of size bytes (-1 when unknown) and at
// most limit: into memory when it has at most BodyInMemory, else into a
// file in dir, removed from dir as soon as it is made (it lives while it
// is open), so that a call of many rows is not held in memory while it is
// checked, typed, written and loaded, each a pass over its rows.
// Errors: invalid (the body could not be read), too_large.
func Spool(body io.Reader, size, limit int64, dir string) (*Body, error) {
	in := &readFailure{r: io.LimitReader(body, limit+1)}
	var head bytes.Buffer
	if size <= BodyInMemory {
		if size > 0 {
			head.Grow(int(size) + bytes.MinRead)
		}
		n, err := head.ReadFrom(io.LimitReader(in, BodyInMemory+1))
		if err != nil {
			return nil, unreadable(err)
		}
		if n > limit {
			return nil, tooLargeBody(limit)
		}
		if n <= BodyInMemory {
			return &Body{SectionReader: io.NewSectionReader(bytes.NewReader(head.Bytes()), 0, n)}, nil
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	fh, err := os.CreateTemp(dir, "body-*")
	if engine.NoSpace(err) {
		return nil, engine.NoSpaceError(err)
	}
	if err != nil {
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	if err := os.Remove(fh.Name()); err != nil {
		fh.Close()
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	n, err := io.Copy(fh, io.MultiReader(&head, in))
	switch {
	case in.err != nil:
		err = unreadable(in.err)
	case engine.NoSpace(err):
		err = engine.NoSpaceError(err)
	case err != nil:
		err = fmt.Errorf("toolcall: keeping a request body: %w", err)
	case n > limit:
		err = tooLargeBody(limit)
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return &Body{SectionReader: io.NewSectionReader(fh, 0, n), file: fh}, nil
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
