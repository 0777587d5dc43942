// Package mcpserver is datadesk's Model Context Protocol surface: the
// registered tools under their provider names, approvals_get, and the
// stored tables as resources, over streamable HTTP and stdio. Each tool
// call goes through the tool-call pipeline (toolcall) as an HTTP call
// does, and is recorded in the audit log as one.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/rbac"
	"datadesk/surface"
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
	// an answer as a compact table as far as they fit, its hint and
	// notes (Tool.Text). Many hosts pass a model the text alone.
	MaxText = 8000
)

var approvalsSchema = json.RawMessage(`{"type": "object", "required": ["approval_id"], "additionalProperties": false,
"properties": {"approval_id": {"type": "string", "minLength": 1, "maxLength": 128}}}`)

// Deps are what the MCP surface uses of the server it is part of.
type Deps struct {
	// Services lend the caller (Access), the turns for large bodies and
	// reads of rows (Turns) and the clock (Now).
	surface.Services
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
	Logger       *slog.Logger
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
		Arguments: func() (*toolcall.Arguments, error) { return decodeMCPArguments(ctx, raw) }})
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
	return mcpResult(t, out.Raw)
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

// mcpResult is a successful call's result, raw the HTTP answer's result:
// it is the structured content, and beside it a text a model can act on
// when its host passes it nothing else (answerText).
func mcpResult(t *toolcall.Tool, raw []byte) *mcp.CallToolResult {
	var structured map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&structured); err != nil {
		return mcpError(err)
	}
	// The structured content is the answer as encoded once; the map is
	// read only to word the text.
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(raw),
		Content: []mcp.Content{&mcp.TextContent{Text: t.Text(structured, MaxText)}}}
}
