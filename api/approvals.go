package api

import (
	"context"
	"strconv"

	"github.com/labstack/echo/v5"

	"datadesk"
	"datadesk/rbac"
	"datadesk/serverdb"
)

const (
	// maxApprovalPage bounds a page of the approval list.
	maxApprovalPage = 1000
)

// mayApprove reports whether the caller is an approver.
func (s *Server) mayApprove(c *echo.Context) bool {
	return s.policy.DecideAs(caller(c), rbac.ActionApprove, rbac.Attrs{}).Allowed()
}

// approvalPage reads status, limit and offset, and lists that page of the
// calls the caller may see: every call for an approver, their own for
// others. Errors: invalid.
func (s *Server) approvalPage(c *echo.Context, defaultLimit int) ([]serverdb.Approval, serverdb.ApprovalFilter, bool, error) {
	f := serverdb.ApprovalFilter{Status: c.QueryParam("status"), Limit: defaultLimit}
	valid := f.Status == ""
	for _, st := range serverdb.ApprovalStatuses {
		valid = valid || f.Status == st
	}
	if !valid {
		return nil, f, false, datadesk.Errorf(datadesk.Invalid, "unknown status %q", f.Status).WithField("status").
			WithAllowed(serverdb.ApprovalStatuses...)
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxApprovalPage {
			return nil, f, false, datadesk.Errorf(datadesk.Invalid, "limit must be a whole number from 1 to %d", maxApprovalPage).WithField("limit")
		}
		f.Limit = n
	}
	if v := c.QueryParam("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			return nil, f, false, datadesk.Errorf(datadesk.Invalid, "offset must be a whole number from 0 to 1000000").WithField("offset")
		}
		f.Offset = n
	}
	if !s.mayApprove(c) {
		f.UserID = caller(c).UserID
	}
	if f.UserID == "" && s.fanOut(c) {
		return s.clusterApprovalPage(c, f)
	}
	list, more, err := s.system.Approvals(c.Request().Context(), f, s.cfg.Now())
	return list, f, more, err
}

// clusterApprovalPage is an approver's page of every node's queue: each
// node's first offset+limit calls (at most maxApprovalPage), merged newest
// first. A caller's own calls are all on their node, so others need not
// ask. Errors: invalid (a page past maxApprovalPage).
func (s *Server) clusterApprovalPage(c *echo.Context, f serverdb.ApprovalFilter) ([]serverdb.Approval, serverdb.ApprovalFilter, bool, error) {
	n := f.Offset + f.Limit
	if n > maxApprovalPage {
		return nil, f, false, datadesk.Errorf(datadesk.Invalid, "in a cluster, offset and limit together reach at most %d", maxApprovalPage).WithField("offset")
	}
	local := f
	local.Offset, local.Limit = 0, n
	list, more, err := s.system.Approvals(c.Request().Context(), local, s.cfg.Now())
	if err != nil {
		return nil, f, false, err
	}
	others, othersMore := s.peerApprovals(c, f.Status, n)
	page, cut := mergeApprovals(append(list, others...), f.Offset, f.Limit)
	return page, f, cut || more || othersMore, nil
}

// visibleApproval returns an approval the caller may see: their own, or any
// for an approver. Others' answer like missing ones.
func (s *Server) visibleApproval(c *echo.Context) (*serverdb.Approval, error) {
	return s.calls.Approval(c.Request().Context(), caller(c), c.Param("id"), "id")
}

// decide is the decision behind the API's and the page's approve and
// reject. Nobody decides a call of their own unless a policy row grants
// approvals.decide_own. An approval decides the call again under today's
// policy, users and data: a denial since then ends the call denied.
// Errors: forbidden, not_found, conflict.
func (s *Server) decide(c *echo.Context, approve bool) (*serverdb.Approval, error) {
	if err := s.authorize(c, rbac.ActionApprove); err != nil {
		return nil, err
	}
	a, err := s.visibleApproval(c)
	if err != nil {
		return nil, err
	}
	if a.Status != serverdb.ApprovalPending {
		// A stale click: say what happened to the call.
		what := "approval " + a.ID + " was already " + a.Status
		if a.DecidedBy != "" && a.DecidedAt != nil {
			what += " by " + a.DecidedBy + " at " + a.DecidedAt.Format("2006-01-02 15:04")
		}
		return nil, datadesk.Errorf(datadesk.Conflict, "%s; only a pending call can be decided", what).WithField("id")
	}
	who := caller(c)
	if ownCall(who, a) {
		d := s.policy.DecideAs(who, rbac.ActionApproveOwn, rbac.Attrs{Tool: a.Tool})
		c.Set(decisionKey, d)
		if !d.Allowed() {
			return nil, datadesk.Errorf(datadesk.Forbidden, "approval %s is a call of your own; someone else decides it (%s)", a.ID, d.Reason)
		}
	}
	by := who.Name
	if who.ActorName != "" {
		by += " (by " + who.ActorName + ")"
	}
	ctx, now := c.Request().Context(), s.cfg.Now().UTC()
	c.Set(approvalKey, a.ID)
	release, err := s.holdOwner(ctx, a)
	if err != nil {
		return nil, err
	}
	defer release()
	if !approve {
		return s.system.DecideApproval(ctx, a.ID, by, serverdb.ApprovalRejected, now)
	}
	return s.calls.Replay(ctx, a, by)
}

// ownCall reports whether the approver made the call, themselves or as
// the account acting for its caller.
func ownCall(who datadesk.Caller, a *serverdb.Approval) bool {
	for _, mine := range []string{who.UserID, who.ActorID} {
		if mine != "" && (mine == a.UserID || mine == a.ActorID) {
			return true
		}
	}
	return false
}

// holdOwner keeps the owner of an approval on this node while it is
// decided and run: in a cluster, a call is decided only on the node that
// holds its owner, and an owner's move waits for the decision (or the
// decision waits for the move). Errors: conflict (another node holds the
// owner), unavailable (the owner is moving).
func (s *Server) holdOwner(ctx context.Context, a *serverdb.Approval) (func(), error) {
	if !s.clustered() {
		return func() {}, nil
	}
	_, release, err := s.engine.Acquire(ctx, a.UserID)
	if err != nil {
		return nil, err
	}
	n, ok := s.holder(a.UserID)
	switch {
	case !ok:
		release()
		return nil, datadesk.Errorf(datadesk.Unavailable, "approval %s belongs to an account moving to node %s; try again in a moment", a.ID, n.Name)
	case n.Name != s.cfg.Cluster.Self:
		// After a new member list, the owner may live on another node: the
		// call never runs here, where it would write into an empty account.
		release()
		return nil, datadesk.Errorf(datadesk.Conflict, "approval %s belongs to an account that node %s holds now; move the approval there with its owner",
			a.ID, n.Name)
	}
	return release, nil
}
