package rest

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/tableview"
	"datadesk/toolcall"
)

// UploadFile streams the multipart field "file" to disk, ingests tabular
// files and answers the descriptor with the tables' schemas.
func (h *Handler) UploadFile(c *echo.Context) error {
	if err := h.d.Authorize(c, rbac.ActionUpload); err != nil {
		return err
	}
	opts, err := ingest.ParseOptions(c.QueryParam)
	if err != nil {
		return err
	}
	r := c.Request()
	if r.ContentLength > h.d.MaxUpload+(1<<20) {
		return h.d.UploadTooLarge()
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return datadesk.Errorf(datadesk.Invalid, "send the file as multipart/form-data in a field named \"file\"").WithField("file")
	}
	release, err := h.d.EnterBody(r.Context(), h.d.Caller(c).UserID)
	if err != nil {
		return err
	}
	defer release()
	// The body may hold a little more than the file: part headers and
	// boundaries.
	r.Body = h.d.UploadBody(c, h.d.MaxUpload+(1<<20))
	mr, err := r.MultipartReader()
	if err != nil {
		return datadesk.Errorf(datadesk.Invalid, "the multipart body is malformed").WithField("file").WithCause(err)
	}
	store, release, err := h.d.Store(c)
	if err != nil {
		return err
	}
	defer release()
	var part *multipart.Part
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return datadesk.Errorf(datadesk.Invalid, "no field named \"file\" in the upload").WithField("file")
		}
		if err != nil {
			return h.d.UploadError(err)
		}
		if p.FormName() == "file" {
			part = p
			break
		}
		p.Close()
	}
	f, err := h.d.Upload(c, store, part.FileName(), part, opts)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.uploaded(c, f))
}

// ReadAgain reads a stored file again with a person's corrections
// (header_row, sheet), into a new file of new tables, without its bytes
// sent again or copied: the policy, audit, import, turn and storage limit
// are an upload's.
func (h *Handler) ReadAgain(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionUpload, "file")
	if err != nil {
		return err
	}
	defer release()
	var in struct {
		HeaderRow  int    `json:"header_row"`
		HeaderRows []int  `json:"header_rows"`
		Sheet      string `json:"sheet"`
		SkipRows   []int  `json:"skip_rows"`
	}
	if err := toolcall.DecodeBody(c.Request().Body, &in); err != nil {
		return err
	}
	if in.HeaderRow != 0 && len(in.HeaderRows) > 0 {
		return datadesk.Errorf(datadesk.Invalid, "give header_row or header_rows, not both").WithField("header_rows")
	}
	opts := ingest.Options{HeaderRows: in.HeaderRows, Sheet: in.Sheet, SkipRows: in.SkipRows}
	if in.HeaderRow != 0 {
		opts.HeaderRows = []int{in.HeaderRow}
	}
	if err := opts.Check(); err != nil {
		return err
	}
	nf, err := h.d.ReadAgain(c, store, id, opts)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.uploaded(c, nf))
}

// uploaded is the answer to a stored upload: its descriptor and its
// tables' schemas.
func (h *Handler) uploaded(c *echo.Context, f *catalog.File) map[string]any {
	schemas := make([]toolcall.TableSchema, 0, len(f.Tables))
	for i := range f.Tables {
		schemas = append(schemas, toolcall.SchemaOf(&f.Tables[i]))
	}
	return map[string]any{"file": toolcall.Describe(h.d.Links, h.d.Caller(c).UserID, f), "tables": schemas}
}

// ListFiles lists the caller's files (limit, session_only).
func (h *Handler) ListFiles(c *echo.Context) error {
	if err := h.d.Authorize(c, rbac.ActionRead); err != nil {
		return err
	}
	limit := 0
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to 1000").WithField("limit")
		}
		limit = n
	}
	session := ""
	if c.QueryParam("session_only") == "true" {
		session = h.d.Caller(c).ChatSession
	}
	store, release, err := h.d.Store(c)
	if err != nil {
		return err
	}
	defer release()
	files, err := store.Files(c.Request().Context(), session, limit)
	if err != nil {
		return err
	}
	out := make([]toolcall.File, 0, len(files))
	for i := range files {
		out = append(out, toolcall.Describe(h.d.Links, h.d.Caller(c).UserID, &files[i]))
	}
	return c.JSON(http.StatusOK, map[string]any{"files": out})
}

// GetFile answers one of the caller's files.
func (h *Handler) GetFile(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionRead, "file")
	if err != nil {
		return err
	}
	defer release()
	f, err := store.File(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"file": toolcall.Describe(h.d.Links, h.d.Caller(c).UserID, f)})
}

// DeleteFile deletes one of the caller's files and its tables.
func (h *Handler) DeleteFile(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionDelete, "file")
	if err != nil {
		return err
	}
	defer release()
	if err := store.DeleteFile(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// GetTable answers a table's schema.
func (h *Handler) GetTable(c *echo.Context) error {
	_, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
	if err != nil {
		return err
	}
	defer release()
	return c.JSON(http.StatusOK, map[string]any{"table": toolcall.SchemaOf(t)})
}

// TableRows answers a page of a table's rows under the view its address
// names, read as the table page reads its own (tableview): conditions,
// search, sort, columns, summaries and grouping, with offset and limit.
// The answer is the page of rows, its address written back holding only
// what is set (query), each summary asked for, and the grouping's
// groups. Errors: invalid, naming the parameter: one it does not take or
// cannot use; not_found.
func (h *Handler) TableRows(c *echo.Context) error {
	store, t, release, err := h.d.OwnTable(c, rbac.ActionRead)
	if err != nil {
		return err
	}
	defer release()
	v, err := tableview.Parse(t, c.QueryParams(), tableview.ForAPI)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	leave, err := h.d.EnterRead(ctx, h.d.Caller(c).UserID)
	if err != nil {
		return err
	}
	defer leave()
	p, err := store.Rows(ctx, t.ID, v.PageRequest(catalog.DefaultPageSize))
	if err != nil {
		return v.Refused(err)
	}
	answer := rowsAnswer{Page: p, Query: v.Encode()}
	if answer.Summaries, err = v.Summarize(ctx, store); err != nil {
		return v.Refused(err)
	}
	if v.Grouped() {
		if answer.Groups, err = v.Groups(ctx, store, catalog.MaxAnalysisPage); err != nil {
			return v.Refused(err)
		}
	}
	return c.JSON(http.StatusOK, answer)
}

// rowsAnswer is a page of rows with what else its address asked for.
type rowsAnswer struct {
	*catalog.Page
	Query     string                  `json:"query"`
	Summaries []*tableview.Summary    `json:"summaries,omitempty"`
	Groups    *catalog.AnalysisResult `json:"groups,omitempty"`
}
