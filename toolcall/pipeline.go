// Package toolcall runs tool calls, the one path every call takes
// whichever surface it came by. A call from HTTP or MCP (Invoke): the
// surface looks the tool up (Lookup), then the pipeline reads its arguments
// once, validates them against the tool's exact schema, takes the work's
// attributes, lets the policy decide, holds the call for a person or runs
// it, records it in the audit log and encodes its answer once. An approved
// call (Replay) is decided again under today's policy and run, its answer
// kept on the approval; the approve request is what the audit records. The
// owner's store is acquired at most once per call, when its work is first
// read. It holds the tools themselves (files.create, files.read,
// files.query_table, files.analyze_table) and the reading of their
// arguments and of small JSON bodies, and knows nothing of HTTP.
package toolcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"datadesk"
	"datadesk/answers"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/links"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// Defaults for Config fields left zero.
const (
	// DefaultQueryTimeout bounds one query or analysis.
	DefaultQueryTimeout = 30 * time.Second
	// DefaultApprovalTTL is how long a call waits for a person.
	DefaultApprovalTTL = 24 * time.Hour
	// DefaultMaxPendingCall bounds one waiting call's arguments.
	DefaultMaxPendingCall = 32 << 20
	// DefaultMaxPendingBytes bounds the arguments of one user's waiting
	// calls together, and DefaultMaxPendingCalls their number: one user
	// cannot fill the queue for everyone.
	DefaultMaxPendingBytes = 128 << 20
	DefaultMaxPendingCalls = 100
)

// Config configures a Pipeline; zero fields take their defaults.
type Config struct {
	// QueryTimeout bounds a query or an analysis; past it the call
	// answers timeout.
	QueryTimeout time.Duration
	// ApprovalTTL is how long a call waits for approval before it expires.
	ApprovalTTL time.Duration
	// MaxPendingCall bounds the arguments of one call waiting for approval,
	// MaxPendingBytes and MaxPendingCalls one user's waiting calls
	// together; past them a call answers too_large.
	MaxPendingCall  int64
	MaxPendingBytes int64
	MaxPendingCalls int
	// Links signs the download links of the files a call names.
	Links links.Signer
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
	// Observe, when set, is told each call's outcome and how long it took.
	Observe func(tool string, out Outcome, took time.Duration)
}

// Deps are the services a call uses.
type Deps struct {
	Engine *engine.Engine
	Ingest *ingest.Ingester
	Policy *rbac.Policy
	Users  *rbac.Users
	// Approvals keeps the calls waiting for a person.
	Approvals *serverdb.DB
	// Audit says whether a call's record can be written (Ready); Record
	// writes it. A call is refused, unrecorded, when its record would find
	// no room. Without Record calls are not recorded.
	Audit  *rbac.Audit
	Record func(rbac.Entry)
	// Answers keeps read-only calls' answers; nil keeps none.
	Answers *answers.Cache
}

// Pipeline runs tool calls.
type Pipeline struct {
	cfg    Config
	engine *engine.Engine
	ingest *ingest.Ingester
	policy *rbac.Policy
	users  *rbac.Users
	system *serverdb.DB
	audit  *rbac.Audit
	record func(rbac.Entry)
	tools  map[string]*Tool
	// answers is asked after the policy allowed a call, never before.
	answers *answers.Cache
}

// New returns a Pipeline over its dependencies, its tools read from their
// embedded schemas.
func New(cfg Config, d Deps) (*Pipeline, error) {
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.ApprovalTTL <= 0 {
		cfg.ApprovalTTL = DefaultApprovalTTL
	}
	if cfg.MaxPendingCall <= 0 {
		cfg.MaxPendingCall = DefaultMaxPendingCall
	}
	if cfg.MaxPendingBytes <= 0 {
		cfg.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if cfg.MaxPendingCalls <= 0 {
		cfg.MaxPendingCalls = DefaultMaxPendingCalls
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Links.Now == nil {
		cfg.Links.Now = cfg.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	tools, err := loadTools()
	if err != nil {
		return nil, err
	}
	return &Pipeline{cfg: cfg, engine: d.Engine, ingest: d.Ingest, policy: d.Policy, users: d.Users, system: d.Approvals,
		audit: d.Audit, record: d.Record, tools: tools, answers: d.Answers}, nil
}

// Tools are the registered tools, by name.
func (p *Pipeline) Tools() []*Tool {
	out := make([]*Tool, 0, len(p.tools))
	for _, n := range p.toolNames() {
		out = append(out, p.tools[n])
	}
	return out
}

func (p *Pipeline) toolNames() []string {
	names := make([]string, 0, len(p.tools))
	for n := range p.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup finds a tool by its registered name or its provider name.
// Errors: not_found, listing the names.
func (p *Pipeline) Lookup(name string) (*Tool, error) {
	if t, ok := p.tools[name]; ok {
		return t, nil
	}
	for _, t := range p.tools {
		if ProviderName(t.Name) == name {
			return t, nil
		}
	}
	return nil, datadesk.Errorf(datadesk.NotFound, "no tool named %q", name).WithField("name").WithAllowed(p.toolNames()...)
}

// Outcome is what one tool call came to: a result, a pending approval or
// an error, with the policy's decision when one was made.
type Outcome struct {
	// Raw is the result as JSON, within MaxAnswer.
	Raw      []byte
	Approval *serverdb.Approval
	Decision rbac.Decision
	Decided  bool
	Err      error
	// Cached says Raw came from the answers' cache (and carries
	// CachedField).
	Cached bool
}

// Call is one tool call as a surface hands it to Invoke.
type Call struct {
	Who  datadesk.Caller
	Tool *Tool
	// Arguments reads the call's arguments (DecodeArguments of a body,
	// DecodeArgumentObject of an MCP call's), once, inside Invoke: an
	// error reading them is the call's outcome, recorded as any other.
	Arguments func() (*Arguments, error)
	// Began is when the surface took the call, for its record: the
	// reading of its body counts. Invoke's start when zero.
	Began time.Time
}

// Invoke runs one call: read its arguments, validate them against the
// tool's schema, acquire the caller's store, take the work's attributes,
// let the policy decide, and run it or hold it for a person; then record
// it in the audit log. Each tool asks for any further permission its
// arguments need; a call that needs a person is stored as a pending
// approval.
func (p *Pipeline) Invoke(ctx context.Context, c Call) Outcome {
	start := time.Now()
	if c.Began.IsZero() {
		c.Began = p.cfg.Now()
	}
	if p.audit != nil {
		// No call without its record.
		if err := p.audit.Ready(); err != nil {
			p.cfg.Logger.Warn("call refused: the audit log has no room", "action", c.Tool.Name, "user", c.Who.UserID)
			return Outcome{Err: err}
		}
	}
	datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "reading the arguments"})
	args, err := c.Arguments()
	out := Outcome{Err: err}
	if err == nil {
		out = p.decideAndRun(ctx, c.Who, c.Tool, args)
	}
	p.audited(c, args, out)
	if p.cfg.Observe != nil {
		p.cfg.Observe(c.Tool.Name, out, time.Since(start))
	}
	return out
}

// audited records a call: who, what, the policy's decision and reason, the
// outcome and its HTTP status, how long it took, the arguments' hash (taken
// while a body's rows can still be read) and the approval it waits for.
func (p *Pipeline) audited(c Call, args *Arguments, out Outcome) {
	if p.record == nil {
		return
	}
	e := Entry(c.Who, c.Tool.Name, c.Began, p.cfg.Now(), out)
	e.ArgsSHA256 = argsHash(args)
	p.record(e)
}

// Entry is the audit entry of a request that came to out: a tool call's,
// or another MCP request's. Its status is the HTTP status the outcome has
// (Code.Status), 202 for a call waiting for a person.
func Entry(who datadesk.Caller, action string, began, now time.Time, out Outcome) rbac.Entry {
	e := rbac.Entry{Time: began.UTC(), UserID: who.UserID, User: who.Name, ActorID: who.ActorID, Actor: who.ActorName,
		ChatSession: who.ChatSession, DurationMS: float64(now.Sub(began).Microseconds()) / 1000,
		Action: action, Outcome: "ok", Status: 200}
	if out.Decided {
		e.Decision, e.Reason = out.Decision.Effect, out.Decision.Reason
	}
	switch {
	case out.Err != nil:
		code := datadesk.ErrorCode(out.Err)
		e.Outcome, e.Status = string(code), code.Status()
	case out.Approval != nil:
		e.Outcome, e.Status, e.ApprovalID = "pending", 202, out.Approval.ID
	}
	return e
}

// decideAndRun is Invoke before it is counted.
func (p *Pipeline) decideAndRun(ctx context.Context, who datadesk.Caller, t *Tool, args *Arguments) Outcome {
	if !t.Enabled {
		return Outcome{Err: datadesk.Errorf(datadesk.Forbidden, "tool %s is disabled", t.Name)}
	}
	if err := t.check(args); err != nil {
		return Outcome{Err: err}
	}
	cs := &callStore{ctx: ctx, engine: p.engine, owner: who.UserID}
	defer cs.close()
	datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "weighing the call for the policy"})
	attrs, err := workAttrs(ctx, cs.get, p.ingest, t, args)
	if err != nil {
		return Outcome{Err: err}
	}
	d := p.policy.DecideCallAs(who, t.Name, t.floor(), attrs)
	out := Outcome{Decision: d, Decided: true}
	switch d.Effect {
	case rbac.Deny:
		out.Err = datadesk.Errorf(datadesk.Forbidden, "%s may not use %s: %s", who.Name, t.Name, d.Reason)
		return out
	case rbac.Approve:
		out.Approval, out.Err = p.requestApproval(ctx, who, t, args, attrs, d.Reason, callTarget(ctx, cs.get, args))
		return out
	}
	store, err := cs.get()
	if err != nil {
		out.Err = err
		return out
	}
	var key answers.Key
	keep := false
	if p.answers != nil {
		key, keep = answerKey(store, t, args)
	}
	if keep {
		if raw, ok := p.answers.Get(key); ok {
			out.Raw, out.Cached = markCached(raw), true
			return out
		}
	}
	call := &toolCall{ctx: ctx, caller: who, store: store}
	var result any
	datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "running " + t.Name})
	result, out.Err = t.run(p, call, args)
	if na := (*needsApproval)(nil); errors.As(out.Err, &na) {
		out.Approval, out.Err = p.requestApproval(ctx, who, t, args, attrs, na.reason, callTarget(ctx, cs.get, args))
	}
	if out.Err == nil && out.Approval == nil {
		datadesk.ReportProgress(ctx, datadesk.Progress{Stage: "writing the answer"})
		out.Raw, out.Err = encodeAnswer(result)
		if keep && out.Err == nil {
			p.answers.Put(key, out.Raw)
		}
	}
	return out
}

// AnswerStats are the answers' cache's counts and size.
func (p *Pipeline) AnswerStats() answers.Stats { return p.answers.Stats() }

// encodeAnswer encodes a tool's result within MaxAnswer. Errors:
// too_large.
func encodeAnswer(result any) ([]byte, error) {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	if len(raw) > MaxAnswer {
		return nil, datadesk.Errorf(datadesk.TooLarge, "the answer would have %d bytes; a tool answers at most %d: ask for fewer rows or columns",
			len(raw), MaxAnswer)
	}
	return raw, nil
}

// Check says what the policy decides for a user calling a tool with
// arguments, without running it: the decision behind `datadesk policy
// check`. Like a real call, it reads the attributes from the work (a copy's
// source table, a ZIP's members) in the user's store. Errors: not_found
// (tool), invalid (arguments).
func Check(ctx context.Context, p *rbac.Policy, eng *engine.Engine, user *rbac.User, toolName string, args map[string]any) (rbac.Decision, error) {
	tools, err := loadTools()
	if err != nil {
		return rbac.Decision{}, err
	}
	t, ok := tools[toolName]
	if !ok {
		// Not a tool: an HTTP action such as files.upload, decided as is.
		return p.Decide(user.Name, user.Role, toolName, rbac.Attrs{}), nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return rbac.Decision{}, fmt.Errorf("toolcall: %w", err)
	}
	call, err := DecodeArgumentObject(raw)
	if err != nil {
		return rbac.Decision{}, err
	}
	if err := t.check(call); err != nil {
		return rbac.Decision{}, err
	}
	cs := &callStore{ctx: ctx, engine: eng, owner: user.ID}
	defer cs.close()
	attrs, err := workAttrs(ctx, cs.get, ingest.New(ingest.Config{}), t, call)
	if err != nil {
		return rbac.Decision{}, err
	}
	return p.DecideCall(user.Name, user.Role, t.Name, t.floor(), attrs), nil
}
