// Package rbac decides who may do what: users with their bearer tokens and
// passwords, and a Casbin policy over roles, users, actions and the call's
// attributes. It answers with a decision value, allow, deny or approve, and
// the rule that decided it; never with an error.
package rbac

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	fileadapter "github.com/casbin/casbin/v2/persist/file-adapter"
	stringadapter "github.com/casbin/casbin/v2/persist/string-adapter"

	"datadesk"
)

// Roles, from least to most trusted; each inherits the one before it in the
// default policy. platform is a chat platform's account, which may act for
// users.
var Roles = []string{"viewer", "analyst", "admin", "platform"}

// Actions the policy knows. Names are matched exactly, never as patterns.
const (
	ActionRead       = "files.read"
	ActionQueryTable = "files.query_table"
	ActionAnalyze    = "files.analyze_table"
	ActionCreate     = "files.create"
	ActionUpload     = "files.upload"
	ActionDelete     = "files.delete"
	// ActionApprove lets a user list, approve and reject pending calls.
	ActionApprove = "approvals.decide"
	// ActionAudit lets a user read the audit log.
	ActionAudit = "admin.audit"
	// ActionActFor lets a chat platform call on behalf of its users; its
	// rows read r.attrs.TargetRole, the role of the user acted for.
	ActionActFor = "act.for"
	// ActionApproveOwn lets an approver decide their own calls. No default
	// row grants it: a call waits for someone else.
	ActionApproveOwn = "approvals.decide_own"
)

// Effects of a decision.
const (
	Allow   = "allow"
	Deny    = "deny"
	Approve = "approve"
)

// Approval modes of a tool's static metadata.
const (
	ApprovalNever  = "NEVER"
	ApprovalPolicy = "POLICY"
	ApprovalAlways = "ALWAYS"
)

// ModelText is the Casbin model. Casbin has two effects only, so each
// policy row carries its decision in a column of its own (allow, deny or
// approve); the priority effect makes the first matching row win, and
// EnforceEx returns that row so its decision can be read. A request names
// the user, their role, the action and the call's attributes; a row names a
// user ("user:NAME") or a role ("role:NAME", inherited through g), the exact
// action, and a condition over r.attrs ("true" for none).
const ModelText = `[request_definition]
r = sub, role, obj, attrs

[policy_definition]
p = sub, obj, cond, decision, eft

[role_definition]
g = _, _

[policy_effect]
e = priority(p.eft) || deny

[matchers]
m = (r.sub == p.sub || g(r.role, p.sub)) && r.obj == p.obj && eval(p.cond)
`

// DefaultPolicy is written to the data directory on first start. Rows are
// read top to bottom and the first match decides, so specific rows (denials,
// conditions) come before general ones.
const DefaultPolicy = `# datadesk policy: p, subject, action, condition, decision, allow
# The first row that matches decides: list denials and conditions before
# general rows, and more trusted roles before the roles they inherit.
# decision is allow, deny or approve; the last column must stay "allow" (it
# only tells Casbin the row matched). Conditions read the call:
# r.attrs.Rows, Bytes, Columns, Format, FileIDs, Derived, Show, Limit, Risk,
# Groups, and for a chat platform acting for a user ActingFor and TargetRole.
# Rows and Bytes come from the work: a copy's source table, a ZIP's members,
# a shown view's matched rows, the rows an analysis scans (with its lookup
# table's); Groups are a stored analysis's groups.

# Admins approve pending calls and read the audit log.
p, role:admin, approvals.decide, true, allow, allow
p, role:admin, admin.audit, true, allow, allow

# Analysts make, upload and delete their own files; big tables wait for a person.
p, role:analyst, files.create, r.attrs.Rows > 50000, approve, allow
p, role:analyst, files.create, true, allow, allow
p, role:analyst, files.query_table, true, allow, allow
p, role:analyst, files.analyze_table, true, allow, allow
p, role:analyst, files.upload, true, allow, allow
p, role:analyst, files.delete, true, allow, allow

# Viewers read and query; what they make waits for a person.
p, role:viewer, files.read, true, allow, allow
p, role:viewer, files.query_table, r.attrs.Show && r.attrs.Derived, approve, allow
p, role:viewer, files.query_table, true, allow, allow
p, role:viewer, files.analyze_table, r.attrs.Show && r.attrs.Derived, approve, allow
p, role:viewer, files.analyze_table, true, allow, allow
p, role:viewer, files.create, r.attrs.Format == 'zip', approve, allow
p, role:viewer, files.create, true, approve, allow

# A chat platform account acts for viewers and analysts, and may do nothing
# itself. Acting for someone never raises power: a call made for a user is
# also decided for the platform (r.attrs.ActingFor), and the stricter answer
# wins, so the platform's rows below cap it. No row lets it approve calls,
# read the audit, or act for approvers and admins.
p, role:platform, act.for, r.attrs.TargetRole == 'viewer', allow, allow
p, role:platform, act.for, r.attrs.TargetRole == 'analyst', allow, allow
p, role:platform, files.read, r.attrs.ActingFor, allow, allow
p, role:platform, files.query_table, r.attrs.ActingFor, allow, allow
p, role:platform, files.analyze_table, r.attrs.ActingFor, allow, allow
p, role:platform, files.create, r.attrs.ActingFor, allow, allow
p, role:platform, files.upload, r.attrs.ActingFor, allow, allow
p, role:platform, files.delete, r.attrs.ActingFor, allow, allow

g, role:analyst, role:viewer
g, role:admin, role:analyst
`

// Attrs are the attributes of a call that policy conditions may read.
type Attrs struct {
	Tool string
	Risk string
	Rows int
	// Bytes is the size of the data the call moves: a ZIP's members.
	Bytes   int64
	Columns int
	Format  string
	FileIDs int
	Derived bool
	Show    bool
	Limit   int
	// Groups are the groups an analysis stores as a table.
	Groups int
	// ActingFor is set when the decision is the acting account's own, for
	// a call it makes on behalf of a user of role TargetRole.
	ActingFor  bool
	TargetRole string
}

// Floor is a tool's static metadata: the least strict a call can be.
type Floor struct {
	Enabled  bool
	Approval string
}

// Decision is the answer to "may this user do this, now".
type Decision struct {
	Effect string `json:"decision"`
	Reason string `json:"reason"`
}

// Allowed reports whether the call may run now.
func (d Decision) Allowed() bool { return d.Effect == Allow }

// Policy decides calls. It rereads its files when they change.
type Policy struct {
	modelPath, policyPath string
	logger                *slog.Logger

	mu      sync.Mutex
	e       *casbin.Enforcer
	modTime time.Time
}

// WriteDefaults writes the default model and policy files into dir unless
// they exist.
func WriteDefaults(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	for name, body := range map[string]string{"model.conf": ModelText, "policy.csv": DefaultPolicy} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				return fmt.Errorf("rbac: %w", err)
			}
		}
	}
	return nil
}

// OpenPolicy reads the policy files in dir (model.conf, policy.csv).
func OpenPolicy(dir string, logger *slog.Logger) (*Policy, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Policy{modelPath: filepath.Join(dir, "model.conf"), policyPath: filepath.Join(dir, "policy.csv"), logger: logger}
	if err := p.reload(); err != nil {
		return nil, err
	}
	return p, nil
}

// NewPolicy returns a Policy over policy text, with the standard model.
func NewPolicy(policy string) (*Policy, error) {
	m, err := model.NewModelFromString(ModelText)
	if err != nil {
		return nil, fmt.Errorf("rbac: model: %w", err)
	}
	e, err := casbin.NewEnforcer(m, stringadapter.NewAdapter(stripComments(policy)))
	if err != nil {
		return nil, fmt.Errorf("rbac: policy: %w", err)
	}
	return &Policy{e: e, logger: slog.New(slog.DiscardHandler)}, nil
}

func stripComments(policy string) string {
	var lines []string
	for _, l := range strings.Split(policy, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, t)
		}
	}
	return strings.Join(lines, "\n")
}

func (p *Policy) newest() time.Time {
	var t time.Time
	for _, f := range []string{p.modelPath, p.policyPath} {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(t) {
			t = st.ModTime()
		}
	}
	return t
}

// reload reads the files again; a broken file keeps the previous policy.
func (p *Policy) reload() error {
	mod := p.newest()
	m, err := model.NewModelFromFile(p.modelPath)
	if err != nil {
		return fmt.Errorf("rbac: %s: %w", p.modelPath, err)
	}
	e, err := casbin.NewEnforcer(m, fileadapter.NewAdapter(p.policyPath))
	if err != nil {
		return fmt.Errorf("rbac: %s: %w", p.policyPath, err)
	}
	p.e, p.modTime = e, mod
	return nil
}

func (p *Policy) enforcer() *casbin.Enforcer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.policyPath != "" {
		if mod := p.newest(); !mod.Equal(p.modTime) {
			if err := p.reload(); err != nil {
				p.logger.Error("policy change not applied; keeping the previous policy", "err", err)
				p.modTime = mod
			} else {
				p.logger.Info("policy reloaded")
			}
		}
	}
	return p.e
}

// Decide says whether user (with role) may perform action with attrs, by
// the first policy row that matches. Unknown users, roles and actions match
// no row and are denied.
func (p *Policy) Decide(user, role, action string, attrs Attrs) Decision {
	e := p.enforcer()
	ok, explain, err := e.EnforceEx("user:"+user, "role:"+role, action, attrs)
	if err != nil {
		return Decision{Effect: Deny, Reason: "policy error: " + err.Error()}
	}
	if !ok || len(explain) < 4 {
		return Decision{Effect: Deny, Reason: fmt.Sprintf("no policy rule lets %s (role %s) use %s", user, role, action)}
	}
	effect := strings.TrimSpace(explain[3])
	switch effect {
	case Allow, Deny, Approve:
	default:
		return Decision{Effect: Deny, Reason: fmt.Sprintf("policy rule %s has unknown decision %q", strings.Join(explain, ", "), effect)}
	}
	return Decision{Effect: effect, Reason: "policy rule: " + strings.Join(explain, ", ")}
}

// DecideCall is Decide under a tool's static metadata, which is the floor:
// a disabled tool is denied, ALWAYS turns an allow into approve, and the
// policy can make a call stricter than its metadata, never looser.
func (p *Policy) DecideCall(user, role, action string, floor Floor, attrs Attrs) Decision {
	if !floor.Enabled {
		return Decision{Effect: Deny, Reason: action + " is disabled"}
	}
	d := p.Decide(user, role, action, attrs)
	if d.Effect == Allow && floor.Approval == ApprovalAlways {
		return Decision{Effect: Approve, Reason: action + " always needs approval (tool metadata); " + d.Reason}
	}
	return d
}

// strictness orders effects: the stricter decision of two wins.
var strictness = map[string]int{Allow: 0, Approve: 1, Deny: 2}

// DecideAs decides for a caller. When a chat platform acts for the user,
// the same call is also decided for the acting account, with ActingFor and
// TargetRole set, and the stricter answer wins: acting for someone never
// gives more than the acting account's own rows allow.
func (p *Policy) DecideAs(who datadesk.Caller, action string, attrs Attrs) Decision {
	return p.DecideCallAs(who, action, Floor{Enabled: true, Approval: ApprovalPolicy}, attrs)
}

// DecideCallAs is DecideAs under a tool's static metadata.
func (p *Policy) DecideCallAs(who datadesk.Caller, action string, floor Floor, attrs Attrs) Decision {
	d := p.DecideCall(who.Name, who.Role, action, floor, attrs)
	if who.ActorName == "" {
		return d
	}
	attrs.ActingFor, attrs.TargetRole = true, who.Role
	ad := p.DecideCall(who.ActorName, who.ActorRole, action, floor, attrs)
	if strictness[ad.Effect] > strictness[d.Effect] {
		ad.Reason = fmt.Sprintf("acting account %s: %s", who.ActorName, ad.Reason)
		return ad
	}
	return d
}
