package rbac

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"datadesk"
)

// TestDecisions is the scenario table: who, what, with which arguments, and
// the decision and the rule that must give it.
func TestDecisions(t *testing.T) {
	// A denial for one user comes first, so it wins over her role's rows.
	policy := "p, user:mallory, files.read, true, deny, allow\n" + DefaultPolicy
	p, err := NewPolicy(policy)
	if err != nil {
		t.Fatal(err)
	}
	on := Floor{Enabled: true, Approval: ApprovalPolicy}
	never := Floor{Enabled: true, Approval: ApprovalNever}
	always := Floor{Enabled: true, Approval: ApprovalAlways}
	off := Floor{Enabled: false, Approval: ApprovalNever}
	tests := []struct {
		name, user, role, action string
		floor                    Floor
		attrs                    Attrs
		want                     string
		reason                   string
	}{
		{"viewer reads", "vic", "viewer", ActionRead, never, Attrs{}, Allow, "role:viewer, files.read"},
		{"viewer queries", "vic", "viewer", ActionQueryTable, never, Attrs{}, Allow, "role:viewer, files.query_table, true"},
		{"viewer derives a view", "vic", "viewer", ActionQueryTable, never, Attrs{Show: true, Derived: true}, Approve, "r.attrs.Show && r.attrs.Derived"},
		{"viewer creates", "vic", "viewer", ActionCreate, on, Attrs{Format: "csv"}, Approve, "role:viewer, files.create, true, approve"},
		{"viewer uploads", "vic", "viewer", ActionUpload, Floor{Enabled: true}, Attrs{}, Deny, "no policy rule"},
		{"analyst inherits reading", "ana", "analyst", ActionRead, never, Attrs{}, Allow, "role:viewer, files.read"},
		{"analyst small table", "ana", "analyst", ActionCreate, on, Attrs{Rows: 50000}, Allow, "role:analyst, files.create, true"},
		{"analyst big table", "ana", "analyst", ActionCreate, on, Attrs{Rows: 50001}, Approve, "r.attrs.Rows > 50000"},
		{"analyst derives a view", "ana", "analyst", ActionQueryTable, never, Attrs{Show: true, Derived: true}, Allow, "role:analyst, files.query_table, true"},
		{"viewer zips", "vic", "viewer", ActionCreate, on, Attrs{Format: "zip"}, Approve, "r.attrs.Format == 'zip'"},
		{"admin inherits two levels", "root", "admin", ActionUpload, Floor{Enabled: true}, Attrs{}, Allow, "role:analyst, files.upload"},
		{"admin approves", "root", "admin", ActionApprove, Floor{Enabled: true}, Attrs{}, Allow, "approvals.decide"},
		{"analyst may not approve", "ana", "analyst", ActionApprove, Floor{Enabled: true}, Attrs{}, Deny, "no policy rule"},
		{"deny comes first", "mallory", "admin", ActionRead, never, Attrs{}, Deny, "user:mallory, files.read, true, deny"},
		{"unknown tool", "root", "admin", "files.exec", on, Attrs{}, Deny, "no policy rule"},
		{"pattern-like tool", "root", "admin", "files.*", on, Attrs{}, Deny, "no policy rule"},
		{"unknown role", "x", "guest", ActionRead, never, Attrs{}, Deny, "no policy rule"},
		{"disabled tool", "root", "admin", ActionRead, off, Attrs{}, Deny, "disabled"},
		{"ALWAYS raises allow", "root", "admin", ActionRead, always, Attrs{}, Approve, "always needs approval"},
		{"ALWAYS keeps deny", "mallory", "admin", ActionRead, always, Attrs{}, Deny, "deny"},
		{"NEVER does not lower approve", "vic", "viewer", ActionCreate, never, Attrs{}, Approve, "role:viewer, files.create"},
		{"platform acts for an analyst", "bot", "platform", ActionActFor, Floor{Enabled: true}, Attrs{TargetRole: "analyst"}, Allow, "act.for"},
		{"platform acts for a viewer", "bot", "platform", ActionActFor, Floor{Enabled: true}, Attrs{TargetRole: "viewer"}, Allow, "act.for"},
		{"platform may not act for an admin", "bot", "platform", ActionActFor, Floor{Enabled: true}, Attrs{TargetRole: "admin"}, Deny, "no policy rule"},
		{"platform may not act for a platform", "bot", "platform", ActionActFor, Floor{Enabled: true}, Attrs{TargetRole: "platform"}, Deny, "no policy rule"},
		{"platform has no rights of its own", "bot", "platform", ActionRead, never, Attrs{}, Deny, "no policy rule"},
		{"analyst may not act for", "ana", "analyst", ActionActFor, Floor{Enabled: true}, Attrs{}, Deny, "no policy rule"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := p.DecideCall(tc.user, tc.role, tc.action, tc.floor, tc.attrs)
			if d.Effect != tc.want || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("got %s (%s), want %s with %q", d.Effect, d.Reason, tc.want, tc.reason)
			}
		})
	}
}

func TestPolicyFilesReload(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDefaults(dir); err != nil {
		t.Fatal(err)
	}
	p, err := OpenPolicy(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Decide("ana", "analyst", ActionUpload, Attrs{}); d.Effect != Allow {
		t.Fatalf("default: %v", d)
	}
	path := filepath.Join(dir, "policy.csv")
	body, _ := os.ReadFile(path)
	changed := strings.Replace(string(body), "p, role:analyst, files.upload, true, allow, allow", "p, role:analyst, files.upload, true, deny, allow", 1)
	os.WriteFile(path, []byte(changed), 0o600)
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(path, future, future)
	if d := p.Decide("ana", "analyst", ActionUpload, Attrs{}); d.Effect != Deny {
		t.Errorf("after change: %v", d)
	}
	// A broken file keeps the last good policy.
	os.WriteFile(filepath.Join(dir, "model.conf"), []byte("[nonsense"), 0o600)
	later := future.Add(2 * time.Second)
	os.Chtimes(filepath.Join(dir, "model.conf"), later, later)
	if d := p.Decide("ana", "analyst", ActionUpload, Attrs{}); d.Effect != Deny {
		t.Errorf("after a broken change: %v", d)
	}
}

func TestUsers(t *testing.T) {
	dir := t.TempDir()
	u, err := OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	user, token, err := u.Add("ana", "analyst")
	if err != nil {
		t.Fatal(err)
	}
	got, err := u.Authenticate(token)
	if err != nil || got.ID != user.ID {
		t.Fatalf("got %v %v, want %s", got, err, user.ID)
	}
	if _, err := u.Authenticate(token + "x"); datadesk.ErrorCode(err) != datadesk.Unauthenticated {
		t.Errorf("wrong token: got %v, want unauthenticated", err)
	}
	if _, _, err := u.Add("ana", "viewer"); datadesk.ErrorCode(err) != datadesk.Conflict {
		t.Errorf("duplicate: got %v, want conflict", err)
	}
	if _, _, err := u.Add("bob", "root"); datadesk.ErrorCode(err) != datadesk.Invalid {
		t.Errorf("bad role: got %v, want invalid", err)
	}
	u2, _ := OpenUsers(dir)
	if _, err := u2.Authenticate(token); err != nil {
		t.Errorf("second store: %v", err)
	}
	if err := u.SetPassword("ana", "short"); datadesk.ErrorCode(err) != datadesk.Invalid {
		t.Errorf("short password: %v", err)
	}
	if err := u.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if got, err := u2.CheckPassword(context.Background(), "ana", "correct horse battery"); err != nil || got.ID != user.ID {
		t.Errorf("password: %v %v", got, err)
	}
	for _, tc := range [][2]string{{"ana", "wrong horse battery"}, {"nobody", "correct horse battery"}} {
		if _, err := u.CheckPassword(context.Background(), tc[0], tc[1]); datadesk.ErrorCode(err) != datadesk.Unauthenticated {
			t.Errorf("%v: %v", tc, err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "users.json"))
	if strings.Contains(string(raw), "correct horse") || strings.Contains(string(raw), token) {
		t.Errorf("secrets stored in clear")
	}
}

// TestActingForCaps: a call made for a user is also decided for the acting
// account, and the stricter answer wins, so acting for someone never gives
// the platform more than its own rows.
func TestActingForCaps(t *testing.T) {
	p, err := NewPolicy(DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	granted, err := NewPolicy("p, role:platform, approvals.decide, r.attrs.ActingFor && r.attrs.TargetRole == 'admin', allow, allow\n" +
		"p, role:platform, act.for, r.attrs.TargetRole == 'admin', allow, allow\n" + DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	bot := func(name, role string) datadesk.Caller {
		return datadesk.Caller{Name: name, Role: role, ActorName: "bot", ActorRole: "platform"}
	}
	tests := []struct {
		name   string
		p      *Policy
		who    datadesk.Caller
		action string
		attrs  Attrs
		want   string
		reason string
	}{
		{"for an analyst: files", p, bot("ana", "analyst"), ActionCreate, Attrs{Rows: 10}, Allow, "role:analyst"},
		{"for an analyst: the user's approval stays", p, bot("ana", "analyst"), ActionCreate, Attrs{Rows: 50001}, Approve, "r.attrs.Rows > 50000"},
		{"for a viewer: the user's approval stays", p, bot("vic", "viewer"), ActionCreate, Attrs{}, Approve, "role:viewer"},
		{"for an admin: no approving", p, bot("root", "admin"), ActionApprove, Attrs{}, Deny, "acting account bot"},
		{"for an admin: no audit", p, bot("root", "admin"), ActionAudit, Attrs{}, Deny, "acting account bot"},
		{"a row grants exactly that", granted, bot("root", "admin"), ActionApprove, Attrs{}, Allow, "role:admin, approvals.decide"},
		{"the grant is for approving only", granted, bot("root", "admin"), ActionAudit, Attrs{}, Deny, "acting account bot"},
		{"the platform alone", p, datadesk.Caller{Name: "bot", Role: "platform"}, ActionRead, Attrs{}, Deny, "no policy rule"},
		{"a user's deny wins", p, bot("vic", "viewer"), ActionUpload, Attrs{}, Deny, "vic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.p.DecideAs(tc.who, tc.action, tc.attrs)
			if d.Effect != tc.want || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("got %s (%s), want %s with %q", d.Effect, d.Reason, tc.want, tc.reason)
			}
		})
	}
}
