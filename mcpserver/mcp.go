// Package mcpserver is datadesk's Model Context Protocol surface: the
// registered tools under their provider names, approvals_get, and the
// stored tables as resources, over streamable HTTP and stdio. Each tool
// call goes through the tool-call pipeline (toolcall) as an HTTP call
// does, and is recorded in the audit log as one.
package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/rbac"
	"datadesk/serverdb"
	"datadesk/toolcall"
)

// MCP names beside the registered tools.
const (
	// ApprovalsTool fetches a pending call's state and, once a person
	// approved it, its result. The tools' specified schemas have no approval argument,
	// so this is a tool of its own rather than an extra argument.
	ApprovalsTool = "approvals_get"
	// TableURITemplate names a stored table's rows, a page at a time.
	TableURITemplate = "datadesk://tables/{id}{?offset,limit}"
	// maxPage bounds a resource page: a client may put it in a model's
	// context whole. MaxPageBytes bounds it in bytes too: a page of a
	// wide table is cut short to fit, and says where the next one starts.
	maxPage      = 200
	defaultPage  = catalog.DefaultPageSize
	MaxPageBytes = 256 << 10
	// maxBatch bounds the messages of one JSON-RPC batch (protocol
	// versions before 2025-06-18 allow batches), and MaxRequestAnswers
	// the bytes the answers to one HTTP request may carry together.
	maxBatch          = 8
	MaxRequestAnswers = 2 * toolcall.MaxAnswer
	// MaxText bounds the text beside a result: a summary, the rows of
	// an answer as a compact table (each cell at most maxCell bytes)
	// as far as they fit, its hint and notes. Many hosts pass a model the
	// text alone.
	MaxText = 8000
	maxCell = 60
)

var approvalsSchema = json.RawMessage(`{"type": "object", "required": ["approval_id"], "additionalProperties": false,
"properties": {"approval_id": {"type": "string", "minLength": 1, "maxLength": 128}}}`)

// Deps are what the MCP surface uses of the server it is part of.
type Deps struct {
	// Calls runs the tool calls.
	Calls *toolcall.Pipeline
	// Engine holds the owners' stores, read for table resources.
	Engine *engine.Engine
	Policy *rbac.Policy
	Users  *rbac.Users
	// Record writes an audit entry as the server does, counting and
	// logging a failure: of the requests that are not tool calls, which
	// the pipeline records.
	Record func(rbac.Entry)
	// Authenticate resolves a request's caller, which Caller then reads.
	Authenticate echo.MiddlewareFunc
	Caller       func(*echo.Context) datadesk.Caller
	// Spool keeps a request's body, taking the caller's turn for a large
	// one; EnterRead takes a turn to read rows.
	Spool     func(c *echo.Context, user string) (*toolcall.Body, error)
	EnterRead func(ctx context.Context, user string) (func(), error)
	Logger    *slog.Logger
	Now       func() time.Time
	// ProgressAfter is how long a tool call runs before it sends the
	// progress notifications its client asked for (DefaultProgressAfter
	// when 0).
	ProgressAfter time.Duration
}

// Handler serves MCP: over streamable HTTP (Handle, behind Authenticate)
// and over a process's stdin and stdout (ServeStdio).
type Handler struct {
	d Deps
}

// NewHandler returns the MCP surface over its dependencies.
func NewHandler(d Deps) *Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.ProgressAfter <= 0 {
		d.ProgressAfter = DefaultProgressAfter
	}
	return &Handler{d: d}
}

type mcpCallerKey struct{}

// Handle serves MCP's streamable HTTP transport at /mcp. It runs after
// authenticate, so each request's MCP server acts as the caller that
// authenticated it; stateless, since no session outlives the request that
// proved who is calling. The SDK's localhost check (a request to a
// loopback address must name a loopback Host) is off: it guards servers
// without authentication against DNS rebinding, a rebound page cannot send
// a bearer token or this site's cookie, and it would refuse every request
// from a reverse proxy on the same machine.
func (h *Handler) Handle() echo.HandlerFunc {
	// One server for every request: each call acts as the caller its
	// request's context carries.
	srv := h.mcpServer(func(ctx context.Context) (datadesk.Caller, error) {
		who, ok := ctx.Value(mcpCallerKey{}).(datadesk.Caller)
		if !ok {
			return datadesk.Caller{}, datadesk.Errorf(datadesk.Unauthenticated, "the call carries no signed-in caller")
		}
		return who, nil
	})
	serve := func(r *http.Request) *mcp.Server {
		if _, ok := r.Context().Value(mcpCallerKey{}).(datadesk.Caller); !ok {
			return nil
		}
		return srv
	}
	opts := mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: h.d.Logger, MaxRequestBodyBytes: toolcall.MaxBody,
		DisableLocalhostProtection: true}
	streamable := mcp.NewStreamableHTTPHandler(serve, &opts)
	// A request that asks for progress is answered as a stream of
	// events, so that its notifications reach the client before the
	// answer; a JSON answer has no room for them.
	opts.JSONResponse = false
	events := mcp.NewStreamableHTTPHandler(serve, &opts)
	return func(c *echo.Context) error {
		r := c.Request()
		ctx := r.Context()
		answer := streamable
		if r.Method == http.MethodPost {
			body, err := h.d.Spool(c, h.d.Caller(c).UserID)
			if err != nil {
				return err
			}
			defer body.Close()
			if asksProgress(body.SectionReader) {
				answer = events
			}
			if n, ok := toolcall.CountItems(body.SectionReader); ok && n > maxBatch {
				return datadesk.Errorf(datadesk.Invalid, "a JSON-RPC batch holds %d messages; at most %d are taken at once", n, maxBatch)
			}
			msg, aside := io.Reader(io.NewSectionReader(body, 0, body.Size())), mcpRows(nil)
			if body.Spooled() {
				msg, aside = setRowsAside(body.SectionReader)
			}
			if aside != nil {
				ctx = context.WithValue(ctx, mcpRowsKey{}, aside)
			}
			r.Body = io.NopCloser(msg)
			r.ContentLength = -1
		}
		ctx = context.WithValue(ctx, mcpCallerKey{}, h.d.Caller(c))
		ctx = withAnswerBudget(ctx, MaxRequestAnswers)
		answer.ServeHTTP(c.Response(), r.WithContext(ctx))
		return nil
	}
}

// progressWindow is how much of a request's body is looked through for a
// progress token: the SDKs write a call's _meta before its arguments.
const progressWindow = 64 << 10

// asksProgress reports whether a request's body names a progress token
// within its first progressWindow bytes.
func asksProgress(body *io.SectionReader) bool {
	head := make([]byte, min(body.Size(), progressWindow))
	n, _ := body.ReadAt(head, 0)
	return bytes.Contains(head[:n], []byte(`"progressToken"`))
}

// answerBudget is what the answers to one request may still carry, in
// bytes: a batch of calls cannot make more work than one call may.
type answerBudget struct{ left atomic.Int64 }

type answerBudgetKey struct{}

func withAnswerBudget(ctx context.Context, n int64) context.Context {
	b := &answerBudget{}
	b.left.Store(n)
	return context.WithValue(ctx, answerBudgetKey{}, b)
}

// spend takes n bytes of the request's budget, if it has one. Errors:
// too_large when the answers together pass it.
func spend(ctx context.Context, n int) error {
	b, ok := ctx.Value(answerBudgetKey{}).(*answerBudget)
	if !ok {
		return nil
	}
	if b.left.Add(-int64(n)) < 0 {
		return datadesk.Errorf(datadesk.TooLarge, "the answers to this request would pass %d bytes together; send fewer calls at once", MaxRequestAnswers)
	}
	return nil
}

// Authenticate is Deps.Authenticate for /mcp, recording refusals in the audit
// log; the tool calls made over MCP are recorded one by one.
func (h *Handler) Authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	authed := h.d.Authenticate(next)
	return func(c *echo.Context) error {
		start := h.d.Now()
		err := authed(c)
		if err != nil {
			h.recordMCP(h.d.Caller(c), "mcp", start, toolcall.Outcome{Err: err}, "")
		}
		return err
	}
}

// ServeStdio serves the Model Context Protocol over r and w (a process's
// stdin and stdout) for the user whose bearer token is given, until the
// client leaves or ctx ends. The token is checked again at every call, so
// a revoked token or a changed role takes effect at once. Errors:
// unauthenticated (token).
func (h *Handler) ServeStdio(ctx context.Context, token string, r io.ReadCloser, w io.WriteCloser) error {
	token = strings.TrimSpace(token)
	resolve := func(context.Context) (datadesk.Caller, error) {
		user, err := h.d.Users.Authenticate(token)
		if err != nil {
			return datadesk.Caller{}, err
		}
		return datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role}, nil
	}
	if _, err := resolve(ctx); err != nil {
		return err
	}
	out := &lockedWriter{w: w}
	in := &batchLimiter{r: bufio.NewReaderSize(r, 1<<20), w: out, closer: r}
	return h.mcpServer(resolve).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: toolcall.MaxBody})
}

// lockedWriter serialises writes of the SDK and of batchLimiter.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// batchLimiter passes a stdio stream of JSON-RPC messages, one per line,
// and answers a batch of more than maxBatch messages itself with an
// error instead of passing it on. Lines longer than its buffer (1 MiB) are
// a call's arguments and pass uncounted.
type batchLimiter struct {
	r      *bufio.Reader
	w      io.Writer
	closer io.Closer
	rest   []byte
	// midLine is set while a line longer than the buffer passes.
	midLine bool
}

func (b *batchLimiter) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		line, err := b.r.ReadSlice('\n')
		long := errors.Is(err, bufio.ErrBufferFull)
		if long || b.midLine {
			// A long line is a call's arguments, not a batch to count.
			b.midLine = long
			b.rest = append([]byte(nil), line...)
			if long {
				break
			}
		} else if n, ok := toolcall.CountItems(io.NewSectionReader(bytes.NewReader(line), 0, int64(len(line)))); ok && n > maxBatch {
			msg := fmt.Sprintf("a JSON-RPC batch holds %d messages; at most %d are taken at once", n, maxBatch)
			answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": msg}})
			if _, werr := b.w.Write(append(answer, '\n')); werr != nil {
				return 0, werr
			}
		} else {
			b.rest = append([]byte(nil), line...)
		}
		if err != nil {
			if len(b.rest) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *batchLimiter) Close() error { return b.closer.Close() }

// mcpServer is an MCP server whose tools and resources act as the caller
// resolve returns for each call's context: the registered tools under their provider
// names, approvals_get, and the stored tables as resources.
func (h *Handler) mcpServer(resolve func(context.Context) (datadesk.Caller, error)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "datadesk", Title: "datadesk files and tables", Version: "1"},
		&mcp.ServerOptions{Logger: h.d.Logger, Instructions: "Files and tables of the signed-in user. " +
			"Query stored tables with files_query_table instead of reading rows; read a table page by page as the resource " +
			"datadesk://tables/{id}?offset=0&limit=50. A call that needs approval answers with an approval id; " +
			"call approvals_get with it once a person approved."})
	for _, t := range h.d.Calls.Tools() {
		if !t.Enabled {
			continue
		}
		srv.AddTool(&mcp.Tool{Name: toolcall.ProviderName(t.Name), Title: t.Name, Description: t.Description,
			InputSchema: toolcall.StandardSchema(t.InputSchema), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly()}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				who, err := resolve(ctx)
				if err != nil {
					return mcpError(err), nil
				}
				ctx, stop := h.progress(ctx, req)
				defer stop()
				return h.mcpCall(ctx, who, t, req.Params.Arguments), nil
			})
	}
	srv.AddTool(&mcp.Tool{Name: ApprovalsTool, Title: "approvals.get", InputSchema: approvalsSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Fetch a call that waited for approval: its status (pending, done, failed, rejected, expired) and, " +
			"once a person approved it and it ran, its result. Pass the approval_id a tool answered with."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who, err := resolve(ctx)
			if err != nil {
				return mcpError(err), nil
			}
			return h.mcpApproval(ctx, who, req.Params.Arguments), nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "table", Title: "Stored table", URITemplate: TableURITemplate,
		MIMEType: "application/json", Description: fmt.Sprintf("A page of a stored table's rows: offset from 0, limit 1 to %d (default %d). "+
			"A table is never read whole; use files_query_table for counts and aggregates.", maxPage, defaultPage)},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			who, err := resolve(ctx)
			if err != nil {
				e := datadesk.AsError(err)
				return nil, fmt.Errorf("%s: %s", e.Code, e.Message)
			}
			return h.mcpReadTable(ctx, who, req.Params.URI)
		})
	return srv
}

// mcpCall runs one tool call over MCP through the pipeline, which reads
// its arguments and records it in the audit log as it does an HTTP call.
func (h *Handler) mcpCall(ctx context.Context, who datadesk.Caller, t *toolcall.Tool, raw json.RawMessage) *mcp.CallToolResult {
	out := h.d.Calls.Invoke(ctx, toolcall.Call{Who: who, Tool: t,
		Arguments: func() (map[string]any, error) { return decodeMCPArguments(ctx, raw) }})
	switch {
	case out.Err != nil:
		return mcpError(out.Err)
	case out.Approval != nil:
		a := toolcall.ApprovalAnswer(out.Approval)
		return &mcp.CallToolResult{StructuredContent: map[string]any{"approval": a},
			Content: []mcp.Content{&mcp.TextContent{Text: approvalText(out.Approval)}}}
	}
	if err := spend(ctx, len(out.Raw)); err != nil {
		return mcpError(err)
	}
	return mcpResult(t.Name, out.Raw)
}

// decodeMCPArguments reads a call's arguments as the HTTP path does, and
// takes back rows set aside from the request's body (setRowsAside).
// Errors: invalid.
func decodeMCPArguments(ctx context.Context, raw json.RawMessage) (map[string]any, error) {
	args, err := toolcall.DecodeArgumentObject(raw)
	if err != nil {
		return nil, err
	}
	if aside, ok := ctx.Value(mcpRowsKey{}).(mcpRows); ok {
		if ref, ok := args[toolcall.RowsArgument].(string); ok && aside[ref] != nil {
			args[toolcall.RowsArgument] = aside[ref]
		}
	}
	return args, nil
}

// mcpRows are the rows of tools/calls whose body was too large to hold,
// by the reference that stands for them: the SDK reads every message
// whole, several times over, so the message it is given names the rows,
// and the call takes them back from the body kept in a file. References
// are drawn at random for each request, so no client can name rows but
// its own call's.
type mcpRows map[string]*toolcall.Rows

type mcpRowsKey struct{}

// setRowsAside returns the JSON-RPC message or batch in body for the SDK to
// read: each tools/call whose arguments hold a list of rows is given with
// the rows replaced by a reference, and the rows are returned by their
// references, to be taken back by the calls; a body with none, or not
// JSON, is given as it came.
func setRowsAside(body *io.SectionReader) (io.Reader, mcpRows) {
	dec := toolcall.NewDecoder(body)
	var found []*toolcall.Rows
	message := func() error {
		method, rows, err := readMessage(dec, body)
		if err == nil && method == "tools/call" && rows != nil {
			found = append(found, rows)
		}
		return err
	}
	var err error
	if toolcall.NextByte(dec, body) == '[' {
		_, err = dec.Token()
		for err == nil && dec.More() {
			err = message()
		}
		if err == nil {
			_, err = dec.Token()
		}
	} else {
		err = message()
	}
	if err == nil {
		err = toolcall.AtEnd(dec)
	}
	if err != nil || len(found) == 0 {
		return io.NewSectionReader(body, 0, body.Size()), nil
	}
	aside := mcpRows{}
	var parts []io.Reader
	at := int64(0)
	for _, rows := range found {
		ref := "datadesk-rows-" + datadesk.NewID("r")
		aside[ref] = rows
		off, n := rows.Span()
		parts = append(parts, io.NewSectionReader(body, at, off-at), strings.NewReader(`"`+ref+`"`))
		at = off + n
	}
	parts = append(parts, io.NewSectionReader(body, at, body.Size()-at))
	return io.MultiReader(parts...), aside
}

// readMessage reads the JSON-RPC message next in dec from body, and
// returns its method and the rows of its arguments, when they are a list
// (toolcall.ReadRows).
func readMessage(dec *json.Decoder, body io.ReaderAt) (method string, rows *toolcall.Rows, err error) {
	skip := func() error { return toolcall.ReadValue(dec, new(json.RawMessage)) }
	err = toolcall.ReadObject(dec, false, func(key string) error {
		switch {
		case key == "method":
			return toolcall.ReadValue(dec, &method)
		case key != "params" || toolcall.NextByte(dec, body) != '{':
			return skip()
		}
		return toolcall.ReadObject(dec, false, func(key string) error {
			if key != "arguments" || toolcall.NextByte(dec, body) != '{' {
				return skip()
			}
			return toolcall.ReadObject(dec, false, func(key string) error {
				if key != toolcall.RowsArgument || toolcall.NextByte(dec, body) != '[' {
					return skip()
				}
				var err error
				rows, err = toolcall.ReadRows(dec, body)
				return err
			})
		})
	})
	return method, rows, err
}

// recordMCP writes the audit entry of one MCP request that is not a tool
// call as audited does for an HTTP one: the same action name, decision,
// outcome and status.
func (h *Handler) recordMCP(who datadesk.Caller, action string, start time.Time, out toolcall.Outcome, approvalID string) {
	if errors.Is(out.Err, rbac.ErrNoRoom) {
		h.d.Logger.Warn("call refused: the audit log has no room", "action", action, "user", who.UserID)
		return
	}
	e := toolcall.Entry(who, action, start, h.d.Now(), out)
	if approvalID != "" {
		e.ApprovalID = approvalID
	}
	h.d.Record(e)
}

// mcpError is a tool error result: the model sees it and can correct the
// call. It carries the HTTP error body; an internal error's cause stays in
// the log.
func mcpError(err error) *mcp.CallToolResult {
	body := datadesk.PublicOf(err)
	text := string(body.Code) + ": " + body.Message
	if body.Field != "" {
		text += " (argument " + body.Field + ")"
	}
	// The allowed values once: most messages list them already.
	if list := strings.Join(body.Allowed, ", "); list != "" && !strings.Contains(body.Message, list) {
		text += "; allowed: " + list
	}
	return &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"error": body},
		Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// approvalText tells the model what a pending call means and what to do.
func approvalText(a *serverdb.Approval) string {
	return fmt.Sprintf("%s needs approval (%s) and did not run yet. Approval id: %s. It waits until %s for a person "+
		"allowed to approve, on the approvals page (/approvals) or with POST /v1/approvals/%s/approve. "+
		"Once approved, call %s with approval_id %q to get the result.",
		a.Tool, a.Reason, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339), a.ID, ApprovalsTool, a.ID)
}

// mcpResult is a successful call's result, raw the HTTP answer's result:
// it is the structured content, and beside it a text a model can act on
// when its host passes it nothing else (answerText).
func mcpResult(toolName string, raw []byte) *mcp.CallToolResult {
	var structured map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&structured); err != nil {
		return mcpError(err)
	}
	// The structured content is the answer as encoded once; the map is
	// read only to word the text.
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(raw),
		Content: []mcp.Content{&mcp.TextContent{Text: clip(summary(toolName, structured), MaxText)}}}
}

// clip cuts s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// mcpApproval answers approvals_get: a call the caller made, or any call
// for an approver; others' answer like missing ones.
func (h *Handler) mcpApproval(ctx context.Context, who datadesk.Caller, raw json.RawMessage) *mcp.CallToolResult {
	start := h.d.Now()
	args, err := decodeMCPArguments(ctx, raw)
	var a *serverdb.Approval
	if err == nil {
		a, err = h.approvalFor(ctx, who, args)
	}
	id := ""
	if a != nil {
		id = a.ID
	}
	h.recordMCP(who, "approvals.get", start, toolcall.Outcome{Err: err}, id)
	if err != nil {
		return mcpError(err)
	}
	a = h.d.Calls.ApprovalView(who, a)
	switch a.Status {
	case serverdb.ApprovalDone:
		if err := spend(ctx, len(a.Result)); err != nil {
			return mcpError(err)
		}
		if a.UserID != who.UserID {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"approval": a},
				Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Approval %s of %s was approved by %s and run; its result is its caller's.", a.ID, a.Tool, a.DecidedBy)}}}
		}
		res := mcpResult(a.Tool, a.Result)
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Approved by %s and run.", a.DecidedBy)}}, res.Content...)
		return res
	case serverdb.ApprovalFailed:
		return mcpError(datadesk.Errorf(datadesk.Code(a.ErrorCode), "approved, but the call failed: %s", a.ErrorMsg))
	}
	text := fmt.Sprintf("Approval %s of %s is %s.", a.ID, a.Tool, a.Status)
	if a.Status == serverdb.ApprovalPending || a.Status == serverdb.ApprovalRunning {
		text += " Ask again later."
	}
	return &mcp.CallToolResult{StructuredContent: map[string]any{"approval": map[string]any{"id": a.ID, "tool": a.Tool,
		"status": a.Status, "reason": a.Reason, "expires_at": a.ExpiresAt, "decided_by": a.DecidedBy}},
		Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// approvalFor returns the approval args name if who may see it.
// Errors: invalid, not_found.
func (h *Handler) approvalFor(ctx context.Context, who datadesk.Caller, args map[string]any) (*serverdb.Approval, error) {
	id, _ := args["approval_id"].(string)
	if id == "" {
		return nil, datadesk.Errorf(datadesk.Invalid, "approval_id is required: the id a tool answered with").WithField("approval_id")
	}
	return h.d.Calls.Approval(ctx, who, id, "approval_id")
}

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
