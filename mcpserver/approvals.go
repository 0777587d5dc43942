package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"datadesk"
	"datadesk/serverdb"
	"datadesk/toolcall"
)

// approvalText tells the model what a pending call means and what to do.
func approvalText(a *serverdb.Approval) string {
	return fmt.Sprintf("%s needs approval (%s) and did not run yet. Approval id: %s. It waits until %s for a person "+
		"allowed to approve, on the approvals page (/approvals) or with POST /v1/approvals/%s/approve. "+
		"Once approved, call %s with approval_id %q to get the result.",
		a.Tool, a.Reason, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339), a.ID, ApprovalsTool, a.ID)
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
		t, err := h.d.Calls.Lookup(a.Tool)
		if err != nil {
			// A tool no longer registered: its result without a text.
			t = &toolcall.Tool{Name: a.Tool}
		}
		res := mcpResult(t, a.Result)
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
func (h *Handler) approvalFor(ctx context.Context, who datadesk.Caller, args *toolcall.Arguments) (*serverdb.Approval, error) {
	id, _ := args.Get("approval_id").(string)
	if id == "" {
		return nil, datadesk.Errorf(datadesk.Invalid, "approval_id is required: the id a tool answered with").WithField("approval_id")
	}
	return h.d.Calls.Approval(ctx, who, id, "approval_id")
}
