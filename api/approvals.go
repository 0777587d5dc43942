package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
)

// DefaultApprovalTTL is how long a call waits for a person.
const DefaultApprovalTTL = 24 * time.Hour

// requestApproval stores a call that needs a person, pending.
func (s *Server) requestApproval(ctx context.Context, who datadesk.Caller, t *tool, args map[string]any, reason string) (*engine.Approval, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now().UTC()
	a := &engine.Approval{ID: datadesk.NewID("a"), Tool: t.Name, Arguments: raw, UserID: who.UserID, UserName: who.Name, Role: who.Role,
		ActorID: who.ActorID, ActorName: who.ActorName, ChatSession: who.ChatSession, Reason: reason,
		Status: engine.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(s.cfg.ApprovalTTL)}
	if err := s.system.AddApproval(ctx, a); err != nil {
		return nil, err
	}
	return a, nil
}

// approvalAnswer is the 202 answer's account of a pending call.
func approvalAnswer(a *engine.Approval) map[string]any {
	return map[string]any{"id": a.ID, "status": a.Status, "tool": a.Tool, "reason": a.Reason, "expires_at": a.ExpiresAt,
		"url": "/v1/approvals/" + a.ID}
}

// mayApprove reports whether the caller is an approver.
func (s *Server) mayApprove(c *echo.Context) bool {
	who := caller(c)
	return s.policy.Decide(who.Name, who.Role, rbac.ActionApprove, rbac.Attrs{}).Allowed()
}

// listApprovals shows approvers every call, and others their own.
func (s *Server) listApprovals(c *echo.Context) error {
	c.Set(actionKey, "approvals.list")
	status := c.QueryParam("status")
	switch status {
	case "", engine.ApprovalPending, engine.ApprovalRunning, engine.ApprovalDone, engine.ApprovalFailed, engine.ApprovalRejected, engine.ApprovalExpired:
	default:
		return datadesk.Errorf(datadesk.Invalid, "unknown status %q", status).WithField("status").
			WithAllowed("pending", "running", "done", "failed", "rejected", "expired")
	}
	limit := 100
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to 1000").WithField("limit")
		}
		limit = n
	}
	owner := caller(c).UserID
	if s.mayApprove(c) {
		owner = ""
	}
	list, err := s.system.Approvals(c.Request().Context(), owner, status, limit, s.cfg.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"approvals": list})
}

// visibleApproval returns an approval the caller may see: their own, or any
// for an approver. Others' answer like missing ones.
func (s *Server) visibleApproval(c *echo.Context) (*engine.Approval, error) {
	id := c.Param("id")
	notFound := datadesk.Errorf(datadesk.NotFound, "no approval with id %q", id).WithField("id")
	if !datadesk.ValidID(id) {
		return nil, notFound
	}
	a, err := s.system.Approval(c.Request().Context(), id, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	if a.UserID != caller(c).UserID && !s.mayApprove(c) {
		return nil, notFound
	}
	return a, nil
}

func (s *Server) getApproval(c *echo.Context) error {
	c.Set(actionKey, "approvals.get")
	a, err := s.visibleApproval(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"approval": a})
}

// decideApproval approves or rejects a pending call. An approved call runs
// at once, exactly once, as its original caller with its original
// arguments; its result is kept on the approval for the caller to fetch.
func (s *Server) decideApproval(approve bool) echo.HandlerFunc {
	return func(c *echo.Context) error {
		a, err := s.decide(c, approve)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"approval": a})
	}
}

// decide is the decision behind the API's and the page's approve and
// reject. Errors: forbidden, not_found, conflict.
func (s *Server) decide(c *echo.Context, approve bool) (*engine.Approval, error) {
	if err := s.authorize(c, rbac.ActionApprove); err != nil {
		return nil, err
	}
	if _, err := s.visibleApproval(c); err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	a, err := s.system.DecideApproval(ctx, c.Param("id"), caller(c).Name, approve, s.cfg.Now().UTC())
	if err != nil {
		return nil, err
	}
	c.Set(approvalKey, a.ID)
	if !approve {
		return a, nil
	}
	t := s.tools[a.Tool]
	var args map[string]any
	dec := json.NewDecoder(bytesReader(a.Arguments))
	dec.UseNumber()
	err = dec.Decode(&args)
	var result any
	if err == nil && t != nil {
		call := &toolCall{ctx: ctx, approved: true, caller: datadesk.Caller{UserID: a.UserID, Name: a.UserName, Role: a.Role,
			ChatSession: a.ChatSession, ActorID: a.ActorID, ActorName: a.ActorName}}
		result, err = t.run(s, call, args)
	}
	code, msg := "", ""
	var raw json.RawMessage
	if err != nil {
		e := datadesk.AsError(err)
		code, msg = string(e.Code), e.Message
		if e.Code == datadesk.Internal {
			s.cfg.Logger.Error("approved call failed", "approval", a.ID, "err", err)
		}
	} else if raw, err = json.Marshal(result); err != nil {
		code, msg = string(datadesk.Internal), "internal error"
	}
	if err := s.system.FinishApproval(ctx, a.ID, raw, code, msg); err != nil {
		return nil, err
	}
	return s.system.Approval(ctx, a.ID, s.cfg.Now())
}

func argsHash(args any) string {
	if args == nil {
		return ""
	}
	b, _ := json.Marshal(args)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
