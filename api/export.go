package api

import (
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/exports"
	"datadesk/rbac"
	"datadesk/toolcall"
)

// exportTable streams a whole stored table as XLSX, CSV or JSON. Rows go
// from the database to the response as they are read; cells cut to Excel's
// cell size are listed on a Notes sheet and counted in the
// X-Datadesk-Truncated-Cells trailer.
func (s *Server) exportTable(c *echo.Context) error {
	format := c.QueryParam("format")
	if format == "" {
		format = "xlsx"
	}
	if _, ok := exports.MediaTypes[format]; !ok {
		return datadesk.Errorf(datadesk.Invalid, "format must be xlsx, csv or json").WithField("format").WithAllowed("xlsx", "csv", "json")
	}
	bom := false
	if v := c.QueryParam("bom"); v != "" {
		var err error
		if bom, err = strconv.ParseBool(v); err != nil {
			return datadesk.Errorf(datadesk.Invalid, "bom must be true or false").WithField("bom")
		}
	}
	withLabels := false
	if v := c.QueryParam("labels"); v != "" {
		var err error
		if withLabels, err = strconv.ParseBool(v); err != nil {
			return datadesk.Errorf(datadesk.Invalid, "labels must be true or false").WithField("labels")
		}
	}
	store, id, release, err := s.ownStore(c, rbac.ActionRead, "table")
	if err != nil {
		return err
	}
	defer release()
	ctx := c.Request().Context()
	t, err := store.Table(ctx, id)
	if err != nil {
		return err
	}
	// AI labels stay out of exports unless asked for, and then sit on a
	// sheet of their own.
	opts := exports.Options{SheetName: t.Name, BOM: bom, TempDir: store.IncomingDir()}
	if withLabels {
		l, err := store.Labels(ctx, t.ID)
		if err != nil {
			return err
		}
		if l != nil {
			opts.Extra = append(opts.Extra, labelSheet(l))
		}
	}
	src, err := toolcall.ExportSource(ctx, store, t)
	if err != nil {
		return err
	}
	// A whole table's CSV is DuckDB's own writer's where it writes every
	// value as the exports do.
	src.CSV = func(w io.Writer) (bool, error) { return store.CopyCSV(ctx, t.ID, w) }
	return s.streamExport(c, format, t.Name, src, opts)
}

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
