package rbac

import (
	"strings"
	"testing"
	"time"
)

// TestTokenCarriesOwner: a new token is dd_<user id>.<secret>, so a proxy
// can route on the id; a token of the older form, stored as a hash before
// ids were carried, still signs in.
func TestTokenCarriesOwner(t *testing.T) {
	users, err := OpenUsers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	u, token, err := users.Add("ana", "analyst")
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(token, "dd_"+u.ID+".")
	if !ok || len(rest) != 43 {
		t.Fatalf("token %q: want dd_%s.<43 base64url characters>", token, u.ID)
	}
	if got, err := users.Authenticate(token); err != nil || got.ID != u.ID {
		t.Fatalf("new token: %v %v", got, err)
	}
	// The secret alone, or under another owner's id, is not the token.
	for _, bad := range []string{"dd_" + rest, "dd_u_aaaaaaaaaaaaaaaaaaaaaaaaaa." + rest} {
		if _, err := users.Authenticate(bad); err == nil {
			t.Errorf("%q signed in", bad)
		}
	}
	old := "dd_b2xkIHN0eWxlIHRva2VuIG9mIHRoaXJ0eS10d28gYnl0ZXM"
	err = users.update(func(db *usersFile) error {
		db.Users[0].Tokens = append(db.Users[0].Tokens, Token{Hash: hashToken(old), CreatedAt: time.Now()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := users.Authenticate(old); err != nil || got.ID != u.ID {
		t.Fatalf("older token: %v %v", got, err)
	}
}
