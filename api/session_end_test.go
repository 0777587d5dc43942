package api

import (
	"net/http"
	"testing"
)

// TestSessionsEndWithCredentials: a web session's cookie kept working for
// up to 12 hours after `user passwd` and `user revoke`; only `user remove`
// ended it. A new password or revoked tokens now end the user's sessions;
// a sign-in after either starts one that works.
func TestSessionsEndWithCredentials(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	addUser(t, users, "ana", "analyst")
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"passwd", func() error { return users.SetPassword("ana", "another horse battery") }},
		{"revoke", func() error { return users.RevokeTokens("ana") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := ts.pageSignIn(users, "ana")
			get := func() int {
				resp, err := client.Get(ts.url + "/v1/files")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if code := get(); code != http.StatusOK {
				t.Fatalf("signed in: got %d", code)
			}
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			if code := get(); code != http.StatusUnauthorized {
				t.Errorf("the old cookie after %s: got %d, want 401", tc.name, code)
			}
			again, _ := ts.pageSignIn(users, "ana")
			resp, err := again.Get(ts.url + "/v1/files")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("signed in again: got %d", resp.StatusCode)
			}
		})
	}
}
