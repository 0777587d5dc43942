package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
)

// MCP names beside the registered tools.
const (
	// mcpApprovalsTool fetches a pending call's state and, once a person
	// approved it, its result. The seed schemas have no approval argument,
	// so this is a tool of its own rather than an extra argument.
	mcpApprovalsTool = "approvals_get"
	// tableURITemplate names a stored table's rows, a page at a time.
	tableURITemplate = "datadesk://tables/{id}{?offset,limit}"
	// mcpMaxPage bounds a resource page: a client may put it in a model's
	// context whole.
	mcpMaxPage     = 200
	mcpDefaultPage = engine.DefaultPageSize
)

var approvalsSchema = json.RawMessage(`{"type": "object", "required": ["approval_id"], "additionalProperties": false,
"properties": {"approval_id": {"type": "string", "minLength": 1, "maxLength": 128}}}`)

type mcpCallerKey struct{}

// mcpHandler serves MCP's streamable HTTP transport at /mcp. It runs after
// authenticate, so each request's MCP server acts as the caller that
// authenticated it; stateless, since no session outlives the request that
// proved who is calling. The SDK's localhost check (a request to a
// loopback address must name a loopback Host) is off: it guards servers
// without authentication against DNS rebinding, a rebound page cannot send
// a bearer token or this site's cookie, and it would refuse every request
// from a reverse proxy on the same machine.
func (s *Server) mcpHandler() echo.HandlerFunc {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		who, ok := r.Context().Value(mcpCallerKey{}).(datadesk.Caller)
		if !ok {
			return nil
		}
		return s.mcpServer(who)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.cfg.Logger, MaxRequestBodyBytes: maxToolBody,
		DisableLocalhostProtection: true})
	return func(c *echo.Context) error {
		r := c.Request()
		h.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), mcpCallerKey{}, caller(c))))
		return nil
	}
}

// mcpAuthenticate is authenticate for /mcp, recording refusals in the audit
// log; the tool calls made over MCP are recorded one by one.
func (s *Server) mcpAuthenticate(next echo.HandlerFunc) echo.HandlerFunc {
	authed := s.authenticate(next)
	return func(c *echo.Context) error {
		start := s.cfg.Now()
		err := authed(c)
		if err != nil {
			s.recordMCP(caller(c), "mcp", start, outcome{err: err}, nil, "")
		}
		return err
	}
}

// ServeMCP serves the Model Context Protocol over r and w (a process's
// stdin and stdout) for the user whose bearer token is given, until the
// client leaves or ctx ends. Errors: unauthenticated (token).
func (s *Server) ServeMCP(ctx context.Context, token string, r io.ReadCloser, w io.WriteCloser) error {
	user, err := s.users.Authenticate(strings.TrimSpace(token))
	if err != nil {
		return err
	}
	who := datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role}
	return s.mcpServer(who).Run(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: maxToolBody})
}

// mcpServer is an MCP server whose tools and resources act as who: the
// registered tools under their provider names, approvals_get, and the
// stored tables as resources.
func (s *Server) mcpServer(who datadesk.Caller) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "datadesk", Title: "datadesk files and tables", Version: "1"},
		&mcp.ServerOptions{Logger: s.cfg.Logger, Instructions: "Files and tables of the signed-in user. " +
			"Query stored tables with files_query_table instead of reading rows; read a table page by page as the resource " +
			"datadesk://tables/{id}?offset=0&limit=50. A call that needs approval answers with an approval id; " +
			"call approvals_get with it once a person approved."})
	for _, n := range s.toolNames() {
		t := s.tools[n]
		if !t.Enabled {
			continue
		}
		srv.AddTool(&mcp.Tool{Name: ProviderName(t.Name), Title: t.Name, Description: t.Description,
			InputSchema: standardSchema(t.InputSchema), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.RiskLevel == RiskRead}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return s.mcpCall(ctx, who, t, req.Params.Arguments), nil
			})
	}
	srv.AddTool(&mcp.Tool{Name: mcpApprovalsTool, Title: "approvals.get", InputSchema: approvalsSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Fetch a call that waited for approval: its status (pending, done, failed, rejected, expired) and, " +
			"once a person approved it and it ran, its result. Pass the approval_id a tool answered with."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.mcpApproval(ctx, who, req.Params.Arguments), nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "table", Title: "Stored table", URITemplate: tableURITemplate,
		MIMEType: "application/json", Description: fmt.Sprintf("A page of a stored table's rows: offset from 0, limit 1 to %d (default %d). "+
			"A table is never read whole; use files_query_table for counts and aggregates.", mcpMaxPage, mcpDefaultPage)},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return s.mcpReadTable(ctx, who, req.Params.URI)
		})
	return srv
}

// mcpCall runs one tool call over MCP through invoke, the HTTP path's own,
// and records it in the audit log as HTTP calls are.
func (s *Server) mcpCall(ctx context.Context, who datadesk.Caller, t *tool, raw json.RawMessage) *mcp.CallToolResult {
	start := s.cfg.Now()
	args, err := decodeMCPArguments(raw)
	out := outcome{err: err}
	if err == nil {
		out = s.invoke(ctx, who, t, args)
	}
	approvalID := ""
	if out.approval != nil {
		approvalID = out.approval.ID
	}
	s.recordMCP(who, t.Name, start, out, args, approvalID)
	switch {
	case out.err != nil:
		return mcpError(out.err)
	case out.approval != nil:
		a := approvalAnswer(out.approval)
		return &mcp.CallToolResult{StructuredContent: map[string]any{"approval": a},
			Content: []mcp.Content{&mcp.TextContent{Text: approvalText(out.approval)}}}
	}
	return mcpResult(t.Name, out.result)
}

// decodeMCPArguments reads a call's arguments keeping numbers exact, as
// the HTTP path does. Errors: invalid.
func decodeMCPArguments(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, datadesk.Errorf(datadesk.Invalid, "arguments must be a JSON object").WithField("arguments")
	}
	return args, nil
}

// recordMCP writes the audit entry of one MCP call as audited does for an
// HTTP one: the same action name, decision, outcome and status.
func (s *Server) recordMCP(who datadesk.Caller, action string, start time.Time, out outcome, args map[string]any, approvalID string) {
	e := rbac.Entry{Time: start.UTC(), UserID: who.UserID, User: who.Name, ActorID: who.ActorID, Actor: who.ActorName,
		ChatSession: who.ChatSession, DurationMS: float64(s.cfg.Now().Sub(start).Microseconds()) / 1000,
		Action: action, ApprovalID: approvalID, Outcome: "ok", Status: http.StatusOK}
	if out.decided {
		e.Decision, e.Reason = out.decision.Effect, out.decision.Reason
	}
	if args != nil {
		e.ArgsSHA256 = argsHash(args)
	}
	switch {
	case out.err != nil:
		e.Outcome = string(datadesk.ErrorCode(out.err))
		e.Status = statusOf[datadesk.AsError(out.err).Code]
	case out.approval != nil:
		e.Outcome, e.Status = "pending", http.StatusAccepted
	}
	if err := s.audit.Record(e); err != nil {
		s.cfg.Logger.Error("audit record failed", "err", err)
	}
}

// mcpError is a tool error result: the model sees it and can correct the
// call. It carries the HTTP error body; an internal error's cause stays in
// the log.
func mcpError(err error) *mcp.CallToolResult {
	e := datadesk.AsError(err)
	body := errorBody{Code: e.Code, Message: e.Message, Field: e.Field, Allowed: e.Allowed}
	if e.Code == datadesk.Internal {
		body = errorBody{Code: e.Code, Message: "internal error"}
	}
	text := string(body.Code) + ": " + body.Message
	if body.Field != "" {
		text += " (argument " + body.Field + ")"
	}
	if len(body.Allowed) > 0 {
		text += "; allowed: " + strings.Join(body.Allowed, ", ")
	}
	return &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"error": body},
		Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// approvalText tells the model what a pending call means and what to do.
func approvalText(a *engine.Approval) string {
	return fmt.Sprintf("%s needs approval (%s) and did not run yet. Approval id: %s. It waits until %s for a person "+
		"allowed to approve, on the approvals page (/approvals) or with POST /v1/approvals/%s/approve. "+
		"Once approved, call %s with approval_id %q to get the result.",
		a.Tool, a.Reason, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339), a.ID, mcpApprovalsTool, a.ID)
}

// mcpResult is a successful call's result: the HTTP answer's result as
// structured content, and a short text a model can act on.
func mcpResult(toolName string, result any) *mcp.CallToolResult {
	raw, err := json.Marshal(result)
	if err != nil {
		return mcpError(err)
	}
	var structured map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&structured); err != nil {
		return mcpError(err)
	}
	return &mcp.CallToolResult{StructuredContent: structured,
		Content: []mcp.Content{&mcp.TextContent{Text: summary(toolName, structured, raw)}}}
}

// summary says in a line or two what a result holds. A query's rows and
// aggregates are small by design and go in as JSON; lists name their files.
func summary(toolName string, r map[string]any, raw []byte) string {
	switch toolName {
	case "files.query_table":
		var b strings.Builder
		fmt.Fprintf(&b, "%v of %v rows match in %v.", r["matched_row_count"], r["source_row_count"], r["file_id"])
		if g, ok := r["group_count"]; ok {
			fmt.Fprintf(&b, " %v groups.", g)
		}
		if a, ok := r["aggregates"]; ok {
			fmt.Fprintf(&b, " Aggregates: %s.", mustMarshal(a))
		}
		if rows, ok := r["rows"].([]any); ok && len(rows) > 0 {
			fmt.Fprintf(&b, " Columns %s, rows %s.", mustMarshal(r["columns"]), mustMarshal(rows))
			if r["has_more"] == true {
				b.WriteString(" More follow: raise offset.")
			}
		}
		if h, ok := r["hint"].(string); ok {
			b.WriteString(" " + h)
		}
		if v, ok := r["view"].(map[string]any); ok {
			fmt.Fprintf(&b, " Shown as table %v (%v rows).", v["table_id"], v["row_count"])
		}
		return b.String()
	case "files.read":
		if f, ok := r["file"].(map[string]any); ok {
			return fmt.Sprintf("%v (%v, %v bytes): download %v", f["filename"], f["id"], f["size"], f["download_url"])
		}
		files, _ := r["files"].([]any)
		names := make([]string, 0, len(files))
		for _, x := range files {
			f, _ := x.(map[string]any)
			names = append(names, fmt.Sprintf("%v (%v)", f["filename"], f["id"]))
		}
		if len(files) == 1 {
			return "1 file: " + names[0] + "."
		}
		return fmt.Sprintf("%d files: %s.", len(files), strings.Join(names, ", "))
	case "files.create":
		if f, ok := r["file"].(map[string]any); ok {
			return fmt.Sprintf("Created %v (%v, %v bytes): download %v", f["filename"], f["id"], f["size"], f["download_url"])
		}
	}
	return string(raw)
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// mcpApproval answers approvals_get: a call the caller made, or any call
// for an approver; others' answer like missing ones.
func (s *Server) mcpApproval(ctx context.Context, who datadesk.Caller, raw json.RawMessage) *mcp.CallToolResult {
	start := s.cfg.Now()
	args, err := decodeMCPArguments(raw)
	var a *engine.Approval
	if err == nil {
		a, err = s.approvalFor(ctx, who, args)
	}
	id := ""
	if a != nil {
		id = a.ID
	}
	s.recordMCP(who, "approvals.get", start, outcome{err: err}, nil, id)
	if err != nil {
		return mcpError(err)
	}
	switch a.Status {
	case engine.ApprovalDone:
		var result any
		dec := json.NewDecoder(bytes.NewReader(a.Result))
		dec.UseNumber()
		if err := dec.Decode(&result); err != nil {
			return mcpError(err)
		}
		res := mcpResult(a.Tool, result)
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Approved by %s and run.", a.DecidedBy)}}, res.Content...)
		return res
	case engine.ApprovalFailed:
		return mcpError(datadesk.Errorf(datadesk.Code(a.ErrorCode), "approved, but the call failed: %s", a.ErrorMsg))
	}
	text := fmt.Sprintf("Approval %s of %s is %s.", a.ID, a.Tool, a.Status)
	if a.Status == engine.ApprovalPending || a.Status == engine.ApprovalRunning {
		text += " Ask again later."
	}
	return &mcp.CallToolResult{StructuredContent: map[string]any{"approval": map[string]any{"id": a.ID, "tool": a.Tool,
		"status": a.Status, "reason": a.Reason, "expires_at": a.ExpiresAt, "decided_by": a.DecidedBy}},
		Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// approvalFor returns the approval args name if who may see it.
// Errors: invalid, not_found.
func (s *Server) approvalFor(ctx context.Context, who datadesk.Caller, args map[string]any) (*engine.Approval, error) {
	id, _ := args["approval_id"].(string)
	if id == "" {
		return nil, datadesk.Errorf(datadesk.Invalid, "approval_id is required: the id a tool answered with").WithField("approval_id")
	}
	notFound := datadesk.Errorf(datadesk.NotFound, "no approval with id %q", id).WithField("approval_id")
	if !datadesk.ValidID(id) {
		return nil, notFound
	}
	a, err := s.system.Approval(ctx, id, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	if a.UserID != who.UserID && !s.policy.Decide(who.Name, who.Role, rbac.ActionApprove, rbac.Attrs{}).Allowed() {
		return nil, notFound
	}
	return a, nil
}

// mcpReadTable reads one page of a stored table, as GET
// /v1/tables/{id}/rows does, under the same permission.
func (s *Server) mcpReadTable(ctx context.Context, who datadesk.Caller, uri string) (*mcp.ReadResourceResult, error) {
	start := s.cfg.Now()
	page, err := s.tablePageAt(ctx, who, uri)
	out := outcome{err: err}
	s.recordMCP(who, "tables.rows", start, out, nil, "")
	if err != nil {
		if datadesk.IsNotFound(err) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		e := datadesk.AsError(err)
		if e.Code == datadesk.Internal {
			return nil, fmt.Errorf("internal error")
		}
		return nil, fmt.Errorf("%s: %s", e.Code, e.Message)
	}
	raw, err := json.Marshal(page)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}, nil
}

// tablePageAt reads datadesk://tables/{id}?offset=&limit=.
// Errors: forbidden, invalid, not_found.
func (s *Server) tablePageAt(ctx context.Context, who datadesk.Caller, uri string) (*engine.Page, error) {
	d := s.policy.Decide(who.Name, who.Role, rbac.ActionRead, rbac.Attrs{})
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
	req := engine.PageRequest{Limit: mcpDefaultPage}
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
		if err != nil || n < 1 || n > mcpMaxPage {
			return nil, datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to %d", mcpMaxPage).WithField("limit")
		}
		req.Limit = n
	}
	store, release, err := s.storeOf(ctx, who.UserID)
	if err != nil {
		return nil, err
	}
	defer release()
	return store.Rows(ctx, id, req)
}
