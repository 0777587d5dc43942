package api

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/toolcall"
)

// store acquires the caller's own store; every file and table lookup goes
// through it, so another owner's ids are simply not there.
func (s *Server) store(c *echo.Context) (*engine.Store, func(), error) {
	return s.storeOf(c.Request().Context(), caller(c).UserID)
}

// storeOf acquires the store of one owner.
func (s *Server) storeOf(ctx context.Context, owner string) (*engine.Store, func(), error) {
	return s.engine.Acquire(ctx, owner)
}

// idParam returns the :id path parameter. An id of the wrong shape is
// reported as not found, exactly like an id of someone else's.
func idParam(c *echo.Context, what string) (string, error) {
	id := c.Param("id")
	if !datadesk.ValidID(id) {
		return "", datadesk.Errorf(datadesk.NotFound, "no %s with id %q", what, id).WithField("id")
	}
	return id, nil
}

// ownStore authorises action, reads the :id parameter and acquires the
// caller's own store, where every lookup of that id happens.
func (s *Server) ownStore(c *echo.Context, action, what string) (*engine.Store, string, func(), error) {
	if err := s.authorize(c, action); err != nil {
		return nil, "", nil, err
	}
	id, err := idParam(c, what)
	if err != nil {
		return nil, "", nil, err
	}
	store, release, err := s.store(c)
	if err != nil {
		return nil, "", nil, err
	}
	return store, id, release, nil
}

func (s *Server) healthz(c *echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// storeUpload is every upload's one path, from the API and from the files
// page: the file's bytes are written to the owner's incoming folder,
// ingested and stored, and the policy decides again on what the file
// turned out to hold (its rows, columns and bytes), as the audit log
// records.
func (s *Server) storeUpload(c *echo.Context, store *engine.Store, name string, body io.Reader, opts ingest.Options) (*catalog.File, error) {
	filename, err := datadesk.CleanFilename(name)
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "receiving"})
	tmp, size, sum, err := s.receive(body, store.IncomingDir())
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp) // gone already once stored
	return s.addUpload(c, store, filename, tmp, size, sum, opts)
}

// readAgain reads a stored file again with a person's corrections, into
// a new file that shares the stored bytes: it takes one of the caller's
// turns for bodies, as an upload does, and counts against the owner's
// storage as a new file of that size. Errors: those of an upload;
// unavailable when no turn frees up.
func (s *Server) readAgain(c *echo.Context, store *engine.Store, id string, opts ingest.Options) (*catalog.File, error) {
	release, err := s.bodies.enter(c.Request().Context(), caller(c).UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	f, tmp, err := store.ShareBytes(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp) // gone already once stored
	return s.addUpload(c, store, f.Filename, tmp, f.Size, f.SHA256, opts)
}

// addUpload ingests and stores the bytes at tmp (size bytes, SHA-256
// sum) as an upload named filename.
func (s *Server) addUpload(c *echo.Context, store *engine.Store, filename, tmp string, size int64, sum string, opts ingest.Options) (*catalog.File, error) {
	ctx := c.Request().Context()
	datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "reading", Done: size, Total: size})
	res, err := s.ingest.ReadWith(ctx, tmp, filename, store.IncomingDir(), opts)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "typing and storing", Done: size, Total: size})
	return store.AddFile(ctx, engine.NewFile{
		Filename: filename, ContentType: res.ContentType, ChatSession: caller(c).ChatSession,
		TempPath: tmp, SHA256: sum, Size: size, Tables: res.Tables,
		Admit: func(tables []catalog.Table) error {
			return s.authorizeWith(c, rbac.ActionUpload, uploadAttrs(filename, size, tables))
		},
	})
}

// uploadAttrs are an upload's attributes once ingested: its bytes and
// format, its tables' rows summed and their widest header.
func uploadAttrs(filename string, size int64, tables []catalog.Table) rbac.Attrs {
	a := rbac.Attrs{Tool: rbac.ActionUpload, Bytes: size, Format: strings.TrimPrefix(strings.ToLower(filepath.Ext(filename)), ".")}
	for _, t := range tables {
		a.Rows += int(t.RowCount)
		a.Columns = max(a.Columns, len(t.Columns))
	}
	return a
}

// uploadReadSize is how much of an upload's body is read from the
// connection at a time. The multipart reader asks for 4 KiB: a socket
// read, and a deadline set, for each cost more than the bytes' copy.
const uploadReadSize = 256 << 10

// uploadBody is the request's body as an upload reads it: at most limit
// bytes, arriving at the pace bodies must keep, from the connection in large
// reads.
func (s *Server) uploadBody(c *echo.Context, limit int64) io.ReadCloser {
	buffered := bufio.NewReaderSize(s.newPacedBody(c.Response(), c.Request().Body), uploadReadSize)
	return http.MaxBytesReader(c.Response(), io.NopCloser(buffered), limit)
}

// receive writes the part to a temporary file and returns its path. A
// failure to read the body is the client's; a failure to write the file
// (a full disk) is the server's and said so.
func (s *Server) receive(part io.Reader, dir string) (path string, size int64, sum string, err error) {
	r := &readErr{r: io.LimitReader(part, s.cfg.MaxUpload+1)}
	h := sha256.New()
	path, err = toolcall.WriteTemp(dir, func(w io.Writer) error {
		// The part gives at most 4 KiB a read: written in large writes
		// (the file's own ReadFrom, hidden, would write each read), each
		// hashed as it is written, so the bytes are not read again.
		bw := bufio.NewWriterSize(io.MultiWriter(w, h), uploadReadSize)
		n, err := io.Copy(bw, r)
		if err == nil && n > s.cfg.MaxUpload {
			err = errTooLarge(s.cfg.MaxUpload)
		}
		if err == nil {
			err = bw.Flush()
		}
		size = n
		return err
	})
	switch {
	case err == nil:
		return path, size, hex.EncodeToString(h.Sum(nil)), nil
	case r.err != nil || datadesk.AsError(err).Code != datadesk.Internal:
		return "", 0, "", bodyError(err, s.cfg.MaxUpload)
	}
	return "", 0, "", datadesk.Errorf(datadesk.Internal, "the server could not store the upload").WithCause(err)
}

// readErr remembers the error its reader gave, to tell it from a writer's.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

func errTooLarge(limit int64) error {
	return datadesk.Errorf(datadesk.TooLarge, "the upload is larger than the limit of %d bytes", limit).WithField("file")
}

func bodyError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	var de *datadesk.Error
	switch {
	case errors.As(err, &de):
		return err
	case errors.As(err, &mbe):
		return errTooLarge(limit)
	case errors.Is(err, context.Canceled):
		return datadesk.Errorf(datadesk.Invalid, "the upload was interrupted").WithCause(err)
	}
	return datadesk.Errorf(datadesk.Invalid, "the upload could not be read").WithField("file").WithCause(err)
}

func (s *Server) fileContent(c *echo.Context) error {
	if caller(c).Role != signedRole {
		if err := s.authorize(c, rbac.ActionRead); err != nil {
			return err
		}
	}
	id, err := idParam(c, "file")
	if err != nil {
		return err
	}
	store, release, err := s.store(c)
	if err != nil {
		return err
	}
	defer release()
	f, fh, err := store.Open(c.Request().Context(), id)
	if err != nil {
		return err
	}
	defer fh.Close()
	h := c.Response().Header()
	h.Set("Content-Disposition", exports.ContentDisposition(f.Filename))
	h.Set("Content-Type", f.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(c.Response(), c.Request(), "", f.CreatedAt, fh)
	return nil
}
