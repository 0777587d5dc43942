package web

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/toolcall"
)

type fileRow struct {
	ID, Filename, ContentType, Created, DownloadURL string
	Size                                            int64
	// Kind and HumanSize are how the page shows them: "Excel workbook",
	// "2.3 MB".
	Kind, HumanSize string
	Image           bool
	Tables          []toolcall.TableSummary
}

// filesPageSize is how many files the files page lists at a time.
const filesPageSize = 25

// fileSorts are the orders the files list takes, each with its words.
var fileSorts = []pageOp{{Value: "date", Name: "newest first"}, {Value: "name", Name: "name"}, {Value: "size", Name: "size, largest first"}, {Value: "rows", Name: "rows, most first"}}

// FilesPage lists the caller's files, a page at a time, searched by name,
// sorted and narrowed to a chat session, with their saved views and the
// assistant's stored results.
func (h *Handler) FilesPage(c *echo.Context) error {
	if err := h.d.Authorize(c, rbac.ActionRead); err != nil {
		return h.pageError(c, err)
	}
	store, release, err := h.d.Store(c)
	if err != nil {
		return h.pageError(c, err)
	}
	defer release()
	session, search := c.QueryParam("session"), strings.TrimSpace(c.QueryParam("q"))
	order := c.QueryParam("sort")
	if !knownOp(fileSorts, order) {
		order = fileSorts[0].Value
	}
	offset, _ := strconv.Atoi(c.QueryParam("offset"))
	// The catalog picks, sorts and counts the files: the page reads its
	// own files only, however many the owner keeps.
	list, err := store.FilesPage(c.Request().Context(), engine.FileQuery{Session: session, Search: search, Sort: order,
		Offset: offset, Limit: filesPageSize})
	if err != nil {
		return h.pageError(c, err)
	}
	sessions, err := store.ChatSessions(c.Request().Context())
	if err != nil {
		return h.pageError(c, err)
	}
	rows := h.fileRows(c, list.Files)
	total, offset := list.Total, list.Offset
	at := func(off int) string {
		v := url.Values{}
		for k, x := range map[string]string{"session": session, "q": search, "sort": order} {
			if x != "" {
				v.Set(k, x)
			}
		}
		v.Set("offset", strconv.Itoa(off))
		return "/files?" + v.Encode()
	}
	pager := filesPager{Total: total, From: min(offset+1, total), To: offset + len(rows)}
	if offset > 0 {
		pager.PrevURL = at(offset - filesPageSize)
	}
	if offset+filesPageSize < total {
		pager.NextURL = at(offset + filesPageSize)
	}
	saved, err := savedViewRows(c.Request().Context(), store)
	if err != nil {
		return h.pageError(c, err)
	}
	results, err := toolcall.StoredResults(c.Request().Context(), store, 50)
	if err != nil {
		return h.pageError(c, err)
	}
	return h.render(c, http.StatusOK, "files", struct {
		page
		Files     []fileRow
		Sessions  []string
		Session   string
		MaxUpload string
		Results   []toolcall.StoredResult
		// CanUpload and CanDelete: the policy may let the caller upload
		// and delete; a viewer sees no control they cannot use.
		CanUpload, CanDelete bool
		Search, Sort         string
		Sorts                []pageOp
		Pager                filesPager
		Saved                []savedViewRow
	}{h.pageBase(c, "Files"), rows, sessions, session, humanSize(h.d.MaxUpload), results, h.may(c, rbac.ActionUpload), h.may(c, rbac.ActionDelete),
		search, order, fileSorts, pager, saved})
}

// fileRows are files as the files page shows them.
func (h *Handler) fileRows(c *echo.Context, files []catalog.File) []fileRow {
	rows := make([]fileRow, 0, len(files))
	for i := range files {
		f := &files[i]
		d := toolcall.Describe(h.d.Links, h.d.Caller(c).UserID, f)
		rows = append(rows, fileRow{ID: f.ID, Filename: f.Filename, ContentType: f.ContentType, Size: f.Size, Created: f.CreatedAt.Format("2006-01-02 15:04"),
			DownloadURL: d.DownloadURL, Image: strings.HasPrefix(f.ContentType, "image/"), Tables: d.Tables,
			Kind: fileKind(f.ContentType, f.Filename), HumanSize: humanSize(f.Size)})
	}
	return rows
}

// filesRedirect goes back to the files page with what happened, so a
// mistake is shown on the page the user was on.
func (h *Handler) filesRedirect(c *echo.Context, done string, err error) error {
	return c.Redirect(http.StatusSeeOther, h.filesAddress(done, err))
}

// filesAddress is the files page saying what happened: done, or why not
// (signed, as every message of the server's in an address).
func (h *Handler) filesAddress(done string, err error) string {
	msg := done
	if err != nil {
		e := datadesk.AsError(err)
		msg = e.Message
		if e.Code == datadesk.Internal {
			msg = "The server could not do that. Try again later."
		}
		msg = "Not done: " + msg
	}
	return h.notes.withNote("/files", nil, msg)
}

// UploadForm stores a file sent from the files page by the API's own path
// (Deps.Upload, the server's one upload service): the same policy, audit,
// turn for bodies and import. The page's script asks for the upload's
// progress (Accept: application/x-ndjson): the answer is then a line of
// JSON for each stage as it begins (reading, typing and storing), and a
// last one with the page to go to; without the script, the form is
// answered with that page.
func (h *Handler) UploadForm(c *echo.Context) error {
	if !strings.Contains(c.Request().Header.Get("Accept"), progressType) {
		done, err := h.upload(c)
		if datadesk.ErrorCode(err) == datadesk.Forbidden && isCSRF(err) {
			return err
		}
		return h.filesRedirect(c, done, err)
	}
	w := c.Response()
	rc := http.NewResponseController(w)
	// The progress is written while the file is still being read: without
	// full duplex, Go's HTTP/1 server reads away or closes the rest of the
	// body once the answer begins, and the upload's read fails ("invalid
	// Read on closed Body") whenever the first line goes out before the
	// last byte came.
	if err := rc.EnableFullDuplex(); err != nil {
		return fmt.Errorf("web: upload progress: %w", err)
	}
	flush := rc.Flush
	w.Header().Set("Content-Type", progressType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	var mu sync.Mutex
	line := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		if enc.Encode(v) == nil {
			_ = flush()
		}
	}
	ctx := datadesk.WithProgress(c.Request().Context(), func(p datadesk.Progress) { line(uploadStage{Stage: p.Stage, Done: p.Done, Total: p.Total}) })
	c.SetRequest(c.Request().WithContext(ctx))
	done, err := h.upload(c)
	line(uploadStage{Location: h.filesAddress(done, err)})
	return nil
}

// progressType is the media type of an upload's progress: one JSON
// object a line.
const progressType = "application/x-ndjson"

// uploadStage is a line of an upload's progress: a stage as it begins,
// or, last, the page to go to.
type uploadStage struct {
	Stage    string `json:"stage,omitempty"`
	Done     int64  `json:"done,omitempty"`
	Total    int64  `json:"total,omitempty"`
	Location string `json:"location,omitempty"`
}

// upload stores the form's file and says what it did. The policy is
// asked before a byte of the body is read, and the form is read as a
// stream: its fields up to the file (the CSRF token among them), then the
// file straight into the owner's folder under the data directory, never
// a temp folder of the system's.
func (h *Handler) upload(c *echo.Context) (string, error) {
	if err := h.d.Authorize(c, rbac.ActionUpload); err != nil {
		return "", err
	}
	r := c.Request()
	limit := h.d.MaxUpload + (1 << 20)
	if r.ContentLength > limit {
		return "", h.d.UploadTooLarge()
	}
	release, err := h.d.EnterBody(r.Context(), h.d.Caller(c).UserID)
	if err != nil {
		return "", err
	}
	defer release()
	r.Body = h.d.UploadBody(c, limit)
	fields, part, err := h.formUntilFile(c)
	if err != nil {
		return "", err
	}
	defer part.Close()
	store, release, err := h.d.Store(c)
	if err != nil {
		return "", err
	}
	defer release()
	opts, err := ingest.ParseOptions(fields.Get)
	if err != nil {
		return "", err
	}
	f, err := h.d.Upload(c, store, part.FileName(), part, opts)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Uploaded %s (%s).", f.Filename, humanSize(f.Size)), nil
}

// Bounds of the upload form's fields before its file: the CSRF token, the
// header rows, the rows to keep out, the sheet's name.
const (
	maxFormField  = 1 << 10
	maxFormFields = 8
)

// errFormCSRF is the refusal of an upload form without its session's
// CSRF token.
var errFormCSRF = datadesk.Errorf(datadesk.Forbidden, "the form is missing its CSRF token; reload the page and try again")

func isCSRF(err error) bool { return err == errFormCSRF }

// formUntilFile reads the upload form's fields up to its file, which it
// returns unread; fields after the file are not read. The session's CSRF
// token must be among the fields before the file. Errors: forbidden (the
// token), invalid (the form).
func (h *Handler) formUntilFile(c *echo.Context) (url.Values, *multipart.Part, error) {
	mr, err := c.Request().MultipartReader()
	if err != nil {
		return nil, nil, datadesk.Errorf(datadesk.Invalid, "the upload form is malformed").WithField("file").WithCause(err)
	}
	fields := url.Values{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, nil, datadesk.Errorf(datadesk.Invalid, "the form has no file").WithField("file")
		}
		if err != nil {
			return nil, nil, h.d.UploadError(fmt.Errorf("web: upload form: %w", err))
		}
		if p.FormName() == "file" {
			if subtle.ConstantTimeCompare([]byte(fields.Get("csrf_token")), []byte(h.d.CSRF(c))) != 1 {
				p.Close()
				return nil, nil, errFormCSRF
			}
			return fields, p, nil
		}
		v, err := io.ReadAll(io.LimitReader(p, maxFormField+1))
		p.Close()
		if err != nil {
			return nil, nil, h.d.UploadError(fmt.Errorf("web: upload form: %w", err))
		}
		if len(v) > maxFormField || len(fields) >= maxFormFields {
			return nil, nil, datadesk.Errorf(datadesk.Invalid, "the form's field %q is longer than a form of this page sends", datadesk.CleanName(p.FormName())).WithField("file")
		}
		fields.Set(p.FormName(), string(v))
	}
}

// DeleteForm deletes one of the caller's files from the files page.
func (h *Handler) DeleteForm(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionDelete, "file")
	if err != nil {
		return h.filesRedirect(c, "", err)
	}
	defer release()
	ctx := c.Request().Context()
	f, err := store.File(ctx, id)
	if err != nil {
		return h.filesRedirect(c, "", err)
	}
	if err := store.DeleteFile(ctx, id); err != nil {
		return h.filesRedirect(c, "", err)
	}
	return h.filesRedirect(c, "Deleted "+f.Filename+".", nil)
}

// humanSize writes a byte count as people read it: 812 bytes, 2.3 MB.
func humanSize(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	}
	f := float64(n)
	for _, unit := range []string{"kB", "MB", "GB", "TB"} {
		f /= 1000
		if f < 999.95 || unit == "TB" {
			if f < 10 {
				return fmt.Sprintf("%.1f %s", f, unit)
			}
			return fmt.Sprintf("%.0f %s", f, unit)
		}
	}
	return ""
}

// fileKinds name content types as people call them.
var fileKinds = map[string]string{
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel workbook",
	"application/vnd.ms-excel": "Excel 97–2003 workbook",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
	"text/csv":         "CSV table",
	"application/json": "JSON",
	"text/plain":       "Text",
	"text/markdown":    "Markdown",
	"application/zip":  "ZIP archive",
	"application/pdf":  "PDF document",
	"image/png":        "PNG image",
	"image/jpeg":       "JPEG image",
	"image/gif":        "GIF image",
	"image/webp":       "WebP image",
	"image/svg+xml":    "SVG image",
}

// fileKind names a file's kind from its content type, or from its
// extension when the type is not a known one.
func fileKind(contentType, filename string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	if k, ok := fileKinds[strings.TrimSpace(mt)]; ok {
		return k
	}
	if ext := strings.TrimPrefix(filepath.Ext(filename), "."); ext != "" {
		return strings.ToUpper(ext) + " file"
	}
	return "File"
}

// may reports whether the policy could let the caller use action, at
// once or with approval: a page offers only the controls that can work.
func (h *Handler) may(c *echo.Context, action string) bool {
	return h.d.Policy.DecideAs(h.d.Caller(c), action, rbac.Attrs{}).Effect != rbac.Deny
}

// filesPager is where a page of the files list is in the whole.
type filesPager struct {
	Total, From, To  int
	PrevURL, NextURL string
}
