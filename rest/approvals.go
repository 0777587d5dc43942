package rest

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"

	"datadesk"
)

// ListApprovals pages the approval queue: summaries (tool, caller, rows,
// bytes, created, expires, status), never the arguments.
func (h *Handler) ListApprovals(c *echo.Context) error {
	h.d.Action(c, "approvals.list")
	list, f, more, err := h.d.ApprovalPage(c, 100)
	if err != nil {
		return err
	}
	out := map[string]any{"approvals": list, "offset": f.Offset, "has_more": more}
	if missing := h.d.Unanswered(c); len(missing) > 0 {
		// The list answers with what it has, and says what it lacks.
		out["unanswered_nodes"] = missing
		out["note"] = "nodes " + strings.Join(missing, ", ") + " did not answer in time; their waiting calls are not in this list"
	}
	if more {
		out["next_offset"] = f.Offset + len(list)
	}
	return c.JSON(http.StatusOK, out)
}

// GetApproval answers an approval the caller may see; in a cluster, an
// approver's request for one this node does not hold goes to the others.
func (h *Handler) GetApproval(c *echo.Context) error {
	h.d.Action(c, "approvals.get")
	a, err := h.d.VisibleApproval(c)
	if datadesk.ErrorCode(err) == datadesk.NotFound && h.d.FanOut(c) && h.d.MayApprove(c) {
		return h.d.ApprovalElsewhere(c, err)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"approval": h.d.Calls.ApprovalView(h.d.Caller(c), a)})
}

// DecideApproval approves or rejects a pending call. An approved call runs
// at once, exactly once, as its original caller with its original
// arguments, if the policy still lets it; its result is kept on the
// approval for the caller to fetch.
func (h *Handler) DecideApproval(approve bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		a, err := h.d.Decide(c, approve)
		if datadesk.ErrorCode(err) == datadesk.NotFound && h.d.FanOut(c) {
			return h.d.ApprovalElsewhere(c, err)
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"approval": h.d.Calls.ApprovalView(h.d.Caller(c), a)})
	}
}
