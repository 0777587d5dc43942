package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/rbac"
	"datadesk/toolcall"
)

// mcpReadTable reads one page of a stored table, as GET
// /v1/tables/{id}/rows does, under the same permission.
func (h *Handler) mcpReadTable(ctx context.Context, who datadesk.Caller, uri string) (*mcp.ReadResourceResult, error) {
	start := h.d.Now()
	var raw []byte
	leave, err := h.d.EnterRead(ctx, who.UserID)
	if err == nil {
		var page *catalog.Page
		page, err = h.tablePageAt(ctx, who, uri)
		if err == nil {
			raw, err = fitPage(page, MaxPageBytes)
		}
		leave()
	}
	if err == nil {
		err = spend(ctx, len(raw))
	}
	out := toolcall.Outcome{Err: err}
	h.recordMCP(who, "tables.rows", start, out, "")
	if err != nil {
		if datadesk.IsNotFound(err) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, resourceError(err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}, nil
}

// tablePageAt reads datadesk://tables/{id}?offset=&limit=.
// Errors: forbidden, invalid, not_found.
func (h *Handler) tablePageAt(ctx context.Context, who datadesk.Caller, uri string) (*catalog.Page, error) {
	d := h.d.Policy.DecideAs(who, rbac.ActionRead, rbac.Attrs{})
	if !d.Allowed() {
		return nil, datadesk.Errorf(datadesk.Forbidden, "%s may not use %s: %s", who.Name, rbac.ActionRead, d.Reason)
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "datadesk" || u.Host != "tables" {
		return nil, datadesk.Errorf(datadesk.NotFound, "no table at %q", uri)
	}
	id := strings.TrimPrefix(u.Path, "/")
	if !datadesk.ValidID(id) {
		return nil, datadesk.Errorf(datadesk.NotFound, "no table at %q", uri)
	}
	req := catalog.PageRequest{Limit: defaultPage}
	q := u.Query()
	if v := q.Get("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, datadesk.Errorf(datadesk.Invalid, "offset must be a whole number from 0").WithField("offset")
		}
		req.Offset = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			return nil, datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to %d", maxPage).WithField("limit")
		}
		req.Limit = n
	}
	store, release, err := h.d.Engine.Acquire(ctx, who.UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	return store.Rows(ctx, id, req)
}

// fitPage encodes a page of rows in at most max bytes: past it, the page
// keeps the rows that fit and says more follow. Each row is encoded once,
// and no row past the bytes: the page's other members first, then its rows
// one at a time into the place of its empty rows. Errors: too_large when
// not even its first row fits.
func fitPage(page *catalog.Page, max int) ([]byte, error) {
	p := *page
	p.Rows = [][]any{}
	env, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	// "rows":[] is found once: inside a string a quote is escaped.
	at := bytes.Index(env, []byte(`"rows":[]`))
	if at < 0 {
		return nil, fmt.Errorf("mcpserver: a page's rows are not where they belong")
	}
	at += len(`"rows":[`)
	var rows bytes.Buffer
	keep := 0
	for _, row := range page.Rows {
		b, err := json.Marshal(row)
		if err != nil {
			return nil, err
		}
		// The limit and has_more may grow by a few digits when cut.
		if len(env)+rows.Len()+len(b)+1+16 > max {
			break
		}
		if keep > 0 {
			rows.WriteByte(',')
		}
		rows.Write(b)
		keep++
	}
	if keep == len(page.Rows) {
		return splice(env, at, rows.Bytes()), nil
	}
	if keep == 0 {
		return nil, datadesk.Errorf(datadesk.TooLarge, "row %d of this table alone takes more than %d bytes as JSON; read it with files_query_table and fewer columns", page.Offset+1, max)
	}
	p.Limit, p.HasMore = keep, true
	if env, err = json.Marshal(p); err != nil {
		return nil, err
	}
	return splice(env, bytes.Index(env, []byte(`"rows":[]`))+len(`"rows":[`), rows.Bytes()), nil
}

// splice puts rows into env at at.
func splice(env []byte, at int, rows []byte) []byte {
	out := make([]byte, 0, len(env)+len(rows))
	out = append(out, env[:at]...)
	out = append(out, rows...)
	return append(out, env[at:]...)
}

// resourceError is a resources/read failure as a JSON-RPC error that keeps
// the error model: invalid arguments as invalid params, the rest as an
// internal error code, the message as the API's, and the code, field and
// allowed values in data, as an HTTP answer's error carries them.
func resourceError(err error) error {
	e := datadesk.AsError(err)
	code, msg := int64(jsonrpc.CodeInternalError), e.Message
	if e.Code == datadesk.Invalid {
		code = jsonrpc.CodeInvalidParams
	}
	if e.Code == datadesk.Internal {
		msg = "internal error"
	}
	data, _ := json.Marshal(map[string]any{"code": e.Code, "field": e.Field, "allowed": e.Allowed})
	return &jsonrpc.Error{Code: code, Message: string(e.Code) + ": " + msg, Data: data}
}
