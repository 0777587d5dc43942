// Package rbac decides who may do what: users and their bearer tokens, and a
// Casbin policy over roles and actions. It answers with a decision value and
// the rule that decided it, not with an error.
package rbac

import (
	"fmt"
	"strings"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	stringadapter "github.com/casbin/casbin/v2/persist/string-adapter"
)

// Roles, from least to most trusted; each inherits the one before it.
var Roles = []string{"viewer", "analyst", "admin"}

// Actions the policy knows. Names are matched exactly, never as patterns.
const (
	ActionRead       = "files.read"
	ActionQueryTable = "files.query_table"
	ActionCreate     = "files.create"
	ActionUpload     = "files.upload"
	ActionDelete     = "files.delete"
)

const modelText = `
[request_definition]
r = sub, obj

[policy_definition]
p = sub, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj
`

// DefaultPolicy grants viewers reading, analysts changing their own files,
// and admins everything analysts may do.
const DefaultPolicy = `
p, role:viewer, files.read, allow
p, role:viewer, files.query_table, allow
p, role:analyst, files.create, allow
p, role:analyst, files.upload, allow
p, role:analyst, files.delete, allow
g, role:analyst, role:viewer
g, role:admin, role:analyst
`

// Decision is the answer to "may this role do this".
type Decision struct {
	Allowed bool
	Reason  string
}

// Policy decides actions by role.
type Policy struct {
	e *casbin.SyncedEnforcer
}

// NewPolicy returns a Policy over policy text in Casbin's CSV form.
func NewPolicy(policy string) (*Policy, error) {
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		return nil, fmt.Errorf("rbac: model: %w", err)
	}
	e, err := casbin.NewSyncedEnforcer(m, stringadapter.NewAdapter(strings.TrimSpace(policy)))
	if err != nil {
		return nil, fmt.Errorf("rbac: policy: %w", err)
	}
	return &Policy{e: e}, nil
}

// Decide says whether role may perform action. Unknown roles and actions
// are denied.
func (p *Policy) Decide(role, action string) Decision {
	ok, explain, err := p.e.EnforceEx("role:"+role, action)
	if err != nil {
		return Decision{Reason: "policy error: " + err.Error()}
	}
	if !ok {
		return Decision{Reason: fmt.Sprintf("no rule allows role %q to use %s", role, action)}
	}
	return Decision{Allowed: true, Reason: "rule " + strings.Join(explain, ", ")}
}
