package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/exports"
	"datadesk/rbac"
	"datadesk/toolcall"
)

// Offload limits: a declared table with more rows, or whose rows take more
// characters as compact JSON, is stored instead of passing to the model.
const (
	OffloadMaxRows  = 50
	OffloadMaxChars = 12000
	// previewRows and previewChars bound the preview in an offload's
	// answer, well inside both limits.
	previewRows  = 10
	previewChars = 4000
)

type declaredTable struct {
	Provider    string          `json:"provider"`
	ChatSession string          `json:"chat_session_id"`
	Title       string          `json:"title"`
	Columns     []any           `json:"columns"`
	Rows        json.RawMessage `json:"rows"`
}

// DeclareTable lets a tool provider hand over a table result. Providers
// configured for offload have results over either limit stored, and the
// model gets a descriptor with a short preview; results within both limits,
// and every result of other providers, pass inline.
func (h *Handler) DeclareTable(c *echo.Context) error {
	if err := h.d.Authorize(c, rbac.ActionCreate); err != nil {
		return err
	}
	body, err := h.d.Spool(c, h.d.Caller(c).UserID)
	if err != nil {
		return err
	}
	defer body.Close()
	in, rows, err := readDeclaredTable(body.SectionReader)
	if err != nil {
		return err
	}
	if strings.TrimSpace(in.Provider) == "" {
		return datadesk.Errorf(datadesk.Invalid, "provider names the module declaring the table").WithField("provider")
	}
	if rows == nil {
		// A list of rows was read as one (readDeclaredTable); anything but
		// none is not a list.
		if raw := bytes.TrimSpace(in.Rows); len(raw) > 0 && string(raw) != "null" {
			return datadesk.Errorf(datadesk.Invalid, "rows must be a list of rows, not %s", toolcall.RawKind(raw)).WithField(toolcall.RowsArgument)
		}
		rows = toolcall.NoRows()
	}
	tbl, err := toolcall.ReadDeclared(in.Columns, rows)
	if err != nil {
		return err
	}
	chars, err := tbl.Chars()
	if err != nil {
		return err
	}
	n := rows.Len()
	if !slices.Contains(h.d.OffloadProviders, in.Provider) || n <= OffloadMaxRows && chars <= OffloadMaxChars {
		inline := map[string]any{"offloaded": false, "columns": tbl.Keys(), "rows": rows, "row_count": n}
		inline["reason"] = fmt.Sprintf("provider %q does not offload its tables", in.Provider)
		if slices.Contains(h.d.OffloadProviders, in.Provider) {
			inline["reason"] = fmt.Sprintf("%d rows and %d characters are within the limits of %d rows and %d characters",
				n, chars, OffloadMaxRows, OffloadMaxChars)
		}
		return c.JSON(http.StatusOK, inline)
	}
	reason := fmt.Sprintf("%d rows are more than %d", n, OffloadMaxRows)
	if n <= OffloadMaxRows {
		reason = fmt.Sprintf("the rows take %d characters, more than %d", chars, OffloadMaxChars)
	}
	// Storing the table is creating a file: the policy sees its rows and
	// columns, as files.create's.
	if err := h.d.AuthorizeWith(c, rbac.ActionCreate, rbac.Attrs{Tool: rbac.ActionCreate, Rows: n, Columns: len(tbl.Keys()), Format: "json"}); err != nil {
		return err
	}

	who := h.d.Caller(c)
	session := in.ChatSession
	if session == "" {
		session = who.ChatSession
	}
	name := in.Title
	if name == "" {
		name = in.Provider + " result"
	}
	filename, err := datadesk.CleanFilename(name + ".json")
	if err != nil {
		return err
	}
	store, release, err := h.d.Store(c)
	if err != nil {
		return err
	}
	defer release()
	f, err := tbl.Store(c.Request().Context(), store, filename, name, session)
	if err != nil {
		return err
	}
	t := f.Tables[0]
	return c.JSON(http.StatusCreated, map[string]any{
		"offloaded": true, "reason": reason, "file": toolcall.Describe(h.d.Links, who.UserID, f),
		"file_id": f.ID, "table_id": t.ID, "row_count": t.RowCount, "column_count": len(t.Columns),
		"schema": t.Columns, "preview": offloadPreview(tbl.Keys(), rows),
	})
}

// readDeclaredTable reads a declared table from body: its rows, when they
// are a list, stay in body as a section read a row at a time (toolcall.ReadRows),
// and the other keys are decoded into a declaredTable. Errors: invalid,
// naming the key and the shape it takes.
func readDeclaredTable(body *io.SectionReader) (declaredTable, *toolcall.Rows, error) {
	var in declaredTable
	var rows *toolcall.Rows
	var rest bytes.Buffer
	dec := toolcall.NewDecoder(body)
	err := toolcall.ReadObject(dec, false, func(key string) error {
		if key == toolcall.RowsArgument && toolcall.NextByte(dec, body) == '[' {
			var err error
			rows, err = toolcall.ReadRows(dec, body)
			return err
		}
		var v json.RawMessage
		if err := toolcall.ReadValue(dec, &v); err != nil {
			return err
		}
		k, _ := json.Marshal(key)
		sep := byte(',')
		if rest.Len() == 0 {
			sep = '{'
		}
		rest.WriteByte(sep)
		rest.Write(k)
		rest.WriteByte(':')
		rest.Write(v)
		return nil
	})
	if err == nil {
		err = toolcall.AtEnd(dec)
	}
	if err != nil {
		// Not one JSON object: decoding the body whole words why.
		whole := toolcall.NewDecoder(io.NewSectionReader(body, 0, body.Size()))
		whole.DisallowUnknownFields()
		if derr := whole.Decode(&in); derr != nil {
			return in, nil, toolcall.DecodeError(derr, &in, "the body")
		}
		return in, nil, datadesk.Errorf(datadesk.Invalid, "the body must be one JSON object").WithCause(err)
	}
	if rest.Len() == 0 {
		rest.WriteByte('{')
	}
	rest.WriteByte('}')
	keys := toolcall.NewDecoder(&rest)
	keys.DisallowUnknownFields()
	if err := keys.Decode(&in); err != nil {
		return in, nil, toolcall.DecodeError(err, &in, "the body")
	}
	return in, rows, nil
}

// offloadPreview returns the first rows that fit both preview bounds.
func offloadPreview(keys []string, rows toolcall.RowList) map[string]any {
	out := []any{}
	size := 2
	errFull := errors.New("preview full")
	_ = rows.Each(func(_ int, r any) error {
		b, _ := json.Marshal(r)
		if len(out) == previewRows || size+len([]rune(string(b)))+1 > previewChars {
			return errFull
		}
		out = append(out, r)
		size += len([]rune(string(b))) + 1
		return nil
	})
	return map[string]any{"columns": keys, "rows": out, "rows_shown": len(out), "rows_total": rows.Len()}
}

type labelsBody struct {
	Title   string            `json:"title"`
	Caption string            `json:"caption"`
	Columns map[string]string `json:"columns"`
	Notes   []string          `json:"notes"`
}

// PutLabels stores the AI's labels of a table, apart from its data.
func (h *Handler) PutLabels(c *echo.Context) error {
	var in labelsBody
	if err := toolcall.DecodeBody(c.Request().Body, &in); err != nil {
		return err
	}
	store, id, release, err := h.d.OwnStore(c, rbac.ActionCreate, "table")
	if err != nil {
		return err
	}
	defer release()
	who := h.d.Caller(c)
	author := who.Name
	if who.ActorName != "" {
		author = who.ActorName + " for " + who.Name
	}
	l, err := store.SetLabels(c.Request().Context(), id, catalog.Labels{Title: in.Title, Caption: in.Caption, Columns: in.Columns,
		Notes: in.Notes, Author: author, UpdatedAt: h.d.Now().UTC()})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"labels": l, "ai_written": true})
}

// GetLabels answers the AI's labels of a table.
func (h *Handler) GetLabels(c *echo.Context) error {
	store, id, release, err := h.d.OwnStore(c, rbac.ActionRead, "table")
	if err != nil {
		return err
	}
	defer release()
	l, err := store.Labels(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"labels": l, "ai_written": true})
}

// labelSheet puts AI labels on a sheet of their own, marked as such.
func labelSheet(l *catalog.Labels) exports.Sheet {
	rows := [][]string{
		{"Written by an AI, not part of the data: " + l.Author + ", " + l.UpdatedAt.Format("2006-01-02 15:04 UTC")},
		{"title", l.Title},
		{"caption", l.Caption},
		{},
		{"column", "description"},
	}
	keys := make([]string, 0, len(l.Columns))
	for k := range l.Columns {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rows = append(rows, []string{k, l.Columns[k]})
	}
	if len(l.Notes) > 0 {
		rows = append(rows, []string{}, []string{"notes"})
		for _, n := range l.Notes {
			rows = append(rows, []string{n})
		}
	}
	return exports.Sheet{Name: "AI labels", Rows: rows}
}
