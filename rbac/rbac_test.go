package rbac

import (
	"testing"

	"datadesk"
)

func TestDecide(t *testing.T) {
	p, err := NewPolicy(DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		role, action string
		want         bool
	}{
		{"viewer", ActionRead, true},
		{"viewer", ActionUpload, false},
		{"analyst", ActionUpload, true},
		{"analyst", ActionRead, true},
		{"admin", ActionDelete, true},
		{"nobody", ActionRead, false},
		{"admin", "files.*", false},
	}
	for _, tc := range tests {
		if got := p.Decide(tc.role, tc.action); got.Allowed != tc.want {
			t.Errorf("%s %s: got %v (%s), want %v", tc.role, tc.action, got.Allowed, got.Reason, tc.want)
		}
	}
}

func TestUsers(t *testing.T) {
	u, err := OpenUsers(t.TempDir())
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
	// A second store over the same directory sees the user: the CLI and
	// the server share the file.
	u2, _ := OpenUsers(u.path[:len(u.path)-len("/users.json")])
	if _, err := u2.Authenticate(token); err != nil {
		t.Errorf("second store: %v", err)
	}
}
