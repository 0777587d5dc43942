package toolcall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"

	"datadesk"
	"datadesk/engine"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// Replay runs a call a person approved: decided again as it would be
// decided now (its caller and acting account as they are today, the
// policy as it is, the attributes of the work as the data now stands), run
// as that caller, and its end recorded. by names who approved it. A denial
// since the call was made ends it denied. The caller holds the approval's
// owner on this node. Errors: internal (the approval holds no call).
func (p *Pipeline) Replay(ctx context.Context, a *serverdb.Approval, by string) (*serverdb.Approval, error) {
	now := p.cfg.Now().UTC()
	t := p.tools[a.Tool]
	raw, err := p.system.ApprovalArguments(ctx, a)
	if err != nil {
		return nil, err
	}
	args, err := DecodeArgumentObject(raw)
	if err != nil || t == nil {
		return nil, datadesk.Errorf(datadesk.Internal, "approval %s holds no call that can run", a.ID).WithCause(err)
	}
	cs := &callStore{ctx: ctx, engine: p.engine, owner: a.UserID}
	defer cs.close()
	run, d := p.redecide(ctx, cs.get, a, t, args)
	if d.Effect == rbac.Deny {
		if _, err := p.system.DecideApproval(ctx, a.ID, by, serverdb.ApprovalDenied, now); err != nil {
			return nil, err
		}
		if err := p.system.FinishApproval(ctx, a.ID, serverdb.ApprovalDenied, nil, string(datadesk.Forbidden), d.Reason); err != nil {
			return nil, err
		}
		return p.system.Approval(ctx, a.ID, p.cfg.Now())
	}
	if _, err := p.system.DecideApproval(ctx, a.ID, by, serverdb.ApprovalRunning, now); err != nil {
		return nil, err
	}
	// A store that cannot be opened now fails the call, as the call's own
	// failure would.
	var result any
	store, err := cs.get()
	if err == nil {
		result, err = t.run(p, &toolCall{ctx: ctx, approved: true, caller: run, store: store}, args)
	}
	status, code, msg := serverdb.ApprovalDone, "", ""
	var out json.RawMessage
	if err == nil {
		out, err = encodeAnswer(result)
	}
	if err != nil {
		e := datadesk.AsError(err)
		status, code, msg = serverdb.ApprovalFailed, string(e.Code), e.Message
		if e.Code == datadesk.Internal {
			msg = "internal error"
			p.cfg.Logger.Error("approved call failed", "approval", a.ID, "err", err)
		}
	}
	if err := p.system.FinishApproval(ctx, a.ID, status, out, code, msg); err != nil {
		return nil, err
	}
	return p.system.Approval(ctx, a.ID, p.cfg.Now())
}

// requestApproval stores a call that needs a person, pending, with the
// files it makes or reads named (target). Errors:
// too_large when the call or the caller's waiting calls pass their limit.
func (p *Pipeline) requestApproval(ctx context.Context, who datadesk.Caller, t *Tool, args *Arguments, attrs rbac.Attrs, reason, target string) (*serverdb.Approval, error) {
	if rows := args.rows; rows != nil && rows.size() > p.cfg.MaxPendingCall {
		// Refused before the arguments are encoded, which would hold them.
		return nil, datadesk.Errorf(datadesk.TooLarge, "a call waiting for approval may carry at most %d bytes of arguments; this one's rows alone have %d",
			p.cfg.MaxPendingCall, rows.size()).WithField("arguments")
	}
	raw, err := args.stored()
	if err != nil {
		return nil, err
	}
	now := p.cfg.Now().UTC()
	a := &serverdb.Approval{ID: datadesk.NewID("a"), Tool: t.Name, Arguments: raw, UserID: who.UserID, UserName: who.Name, Role: who.Role,
		ActorID: who.ActorID, ActorName: who.ActorName, ChatSession: who.ChatSession, Reason: reason, Target: target,
		Status: serverdb.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(p.cfg.ApprovalTTL)}
	// The summary's rows are the work's: a copy's are its source table's.
	a.Rows = int64(attrs.Rows)
	quota := serverdb.PendingQuota{CallBytes: p.cfg.MaxPendingCall, Bytes: p.cfg.MaxPendingBytes, Calls: p.cfg.MaxPendingCalls}
	if err := p.system.AddApproval(ctx, a, quota); err != nil {
		return nil, err
	}
	return a, nil
}

// redecide decides a waiting call again as it would be decided now: its
// caller and acting account as they are today, the policy as it is, and
// the attributes of the work as the data now stands. It returns the caller
// the call runs as; a deny says why it may not.
func (p *Pipeline) redecide(ctx context.Context, open func() (*engine.Store, error), a *serverdb.Approval, t *Tool, args *Arguments) (datadesk.Caller, rbac.Decision) {
	user, err := p.users.ByID(a.UserID)
	if err != nil {
		return datadesk.Caller{}, rbac.Decision{Effect: rbac.Deny, Reason: "the call's user no longer exists"}
	}
	who := datadesk.Caller{UserID: user.ID, Name: user.Name, Role: user.Role, ChatSession: a.ChatSession}
	if a.ActorID != "" {
		actor, err := p.users.ByID(a.ActorID)
		if err != nil {
			return who, rbac.Decision{Effect: rbac.Deny, Reason: "the account that acted for the user no longer exists"}
		}
		if d := p.policy.Decide(actor.Name, actor.Role, rbac.ActionActFor, rbac.Attrs{TargetRole: user.Role}); !d.Allowed() {
			return who, d
		}
		who.ActorID, who.ActorName, who.ActorRole = actor.ID, actor.Name, actor.Role
	}
	attrs, err := workAttrs(ctx, open, p.ingest, t, args)
	if err != nil {
		return who, rbac.Decision{Effect: rbac.Deny, Reason: "the call's data could not be read: " + datadesk.AsError(err).Message}
	}
	return who, p.policy.DecideCallAs(who, t.Name, t.floor(), attrs)
}

// argsHash fingerprints a call's arguments for the audit log: the rows
// argument as it came, then the rest in canonical form (canonicalJSON), so
// that equal arguments sent in another key order hash the same.
func argsHash(args *Arguments) string {
	if args == nil {
		return ""
	}
	h := sha256.New()
	if args.rows != nil {
		if _, err := io.Copy(h, args.rows.reader()); err != nil {
			return ""
		}
	}
	b, err := args.canonical()
	if err != nil {
		return ""
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// Approval returns approval id if who may see it: their own call, or
// any for an approver; others' answer like missing ones. field names the
// argument that carried the id. Errors: not_found.
func (p *Pipeline) Approval(ctx context.Context, who datadesk.Caller, id, field string) (*serverdb.Approval, error) {
	notFound := datadesk.Errorf(datadesk.NotFound, "no approval with id %q", id).WithField(field)
	if !datadesk.ValidID(id) {
		return nil, notFound
	}
	a, err := p.system.Approval(ctx, id, p.cfg.Now())
	if err != nil {
		return nil, err
	}
	if a.UserID != who.UserID && !p.policy.DecideAs(who, rbac.ActionApprove, rbac.Attrs{}).Allowed() {
		return nil, notFound
	}
	return a, nil
}

// ApprovalView is what who may see of a call that waited for approval: all
// of it for the call's own user (or the platform acting for them) while
// the policy lets them read files; for anyone else, an approver, what the
// call asked and a summary of what it did, never the data it returned or
// a link to it.
func (p *Pipeline) ApprovalView(who datadesk.Caller, a *serverdb.Approval) *serverdb.Approval {
	if a.UserID == who.UserID && p.policy.DecideAs(who, rbac.ActionRead, rbac.Attrs{}).Allowed() || len(a.Result) == 0 {
		return a
	}
	v := *a
	v.Result = resultSummary(p.tools[a.Tool], a.Result)
	return &v
}

// resultSummary returns a call's result cut to what an approver sees of
// the tool's results (its summaryKeys): counts and names, never rows,
// aggregates or links.
func resultSummary(t *Tool, raw json.RawMessage) json.RawMessage {
	var r map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&r) != nil {
		return json.RawMessage(`{}`)
	}
	if f, ok := r["file"].(map[string]any); ok {
		r = f
	}
	out := map[string]any{}
	var keys []string
	if t != nil {
		keys = t.summaryKeys()
	}
	for _, k := range keys {
		if v, ok := r[k]; ok {
			out[k] = v
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// ApprovalAnswer is the account of a pending call a surface answers with
// (HTTP's 202, MCP's result).
func ApprovalAnswer(a *serverdb.Approval) map[string]any {
	return map[string]any{"id": a.ID, "status": a.Status, "tool": a.Tool, "reason": a.Reason, "expires_at": a.ExpiresAt,
		"url": "/v1/approvals/" + a.ID}
}
