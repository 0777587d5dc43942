package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"datadesk/exports"
)

// streamExport sends src as an export file. Rows go from the database to
// the response as they are read, and the status is sent with the first
// byte: a failure before it is answered as any error is; a failure after
// it ends the connection without ending the body (no last chunk of a
// chunked HTTP/1.1 body, a reset HTTP/2 stream), so no client takes a cut
// export for a whole one, and the cause is logged.
func (s *Server) streamExport(c *echo.Context, format, name string, src exports.Source, opts exports.Options) error {
	h := c.Response().Header()
	h.Set("Content-Type", exports.MediaTypes[format])
	h.Set("Content-Disposition", exports.ContentDisposition(name+"."+format))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Trailer", "X-Datadesk-Truncated-Cells")
	w := &startWriter{rw: c.Response()}
	var res *exports.Result
	var err error
	switch format {
	case "xlsx":
		res, err = exports.WriteXLSX(w, src, opts)
	case "csv":
		res, err = exports.WriteCSV(w, src, opts)
	case "json":
		res, err = exports.WriteJSON(w, src)
	}
	if err != nil && !w.started {
		for _, k := range []string{"Content-Type", "Content-Disposition", "Trailer"} {
			h.Del(k)
		}
		return err
	}
	if err != nil {
		s.cfg.Logger.Error("export failed after its first byte; the connection is cut", "name", name, "err", err)
		panic(http.ErrAbortHandler)
	}
	w.start()
	h.Set("X-Datadesk-Truncated-Cells", strconv.FormatInt(res.TruncatedCount, 10))
	return nil
}

// startWriter sends the status 200 with the first byte written.
type startWriter struct {
	rw      http.ResponseWriter
	started bool
}

func (w *startWriter) start() {
	if !w.started {
		w.started = true
		w.rw.WriteHeader(http.StatusOK)
	}
}

func (w *startWriter) Write(p []byte) (int, error) {
	w.start()
	return w.rw.Write(p)
}
