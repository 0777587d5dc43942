package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/toolcall"
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
	body, err := spoolBody(s.newIdleBody(c.Response(), r.Body), r.ContentLength, toolcall.MaxBody, s.spoolDir())
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
		return toolcall.DecodeError(err, dst, "the body")
	}
	return nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// spoolDir is where request bodies too large to hold are kept while their
// calls run.
func (s *Server) spoolDir() string { return filepath.Join(s.engine.Dir(), "spool") }
