package rest

import (
	"io"
	"strconv"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/exports"
	"datadesk/rbac"
	"datadesk/toolcall"
)

// ExportTable streams a whole stored table as XLSX, CSV or JSON. Rows go
// from the database to the response as they are read; cells cut to Excel's
// cell size are listed on a Notes sheet and counted in the
// X-Datadesk-Truncated-Cells trailer.
func (h *Handler) ExportTable(c *echo.Context) error {
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
	store, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
	if err != nil {
		return err
	}
	defer release()
	ctx := c.Request().Context()
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
	return h.d.StreamExport(c, format, t.Name, src, opts)
}
