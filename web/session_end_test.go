package web_test

import (
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestSessionsEndWithCredentials: a web session's cookie kept working for
// up to 12 hours after `user passwd` and `user revoke`; only `user remove`
// ended it. A new password or revoked tokens now end the user's sessions;
// a sign-in after either starts one that works.
func TestSessionsEndWithCredentials(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"passwd", func() error { return users.SetPassword("ana", "another horse battery") }},
		{"revoke", func() error { return users.RevokeTokens("ana") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := ts.PageSignIn(users, "ana")
			get := func() int {
				resp, err := client.Get(ts.URL + "/v1/files")
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
			again, _ := ts.PageSignIn(users, "ana")
			resp, err := again.Get(ts.URL + "/v1/files")
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

// TestPagesEndWithCredentials: after `user passwd` or `user revoke` the
// JSON API answered 401 for the old cookie, but the files page, the web
// upload ("Uploaded") and exports answered 200 with it. Every page now ends
// with the session the same way: the old cookie goes to the sign-in page,
// and nothing is stored or sent.
func TestPagesEndWithCredentials(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	code, m := ts.Upload(ana, "orders.csv", []byte(apitest.OrdersCSV))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	table := m["file"].(map[string]any)["table_id"].(string)
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"passwd", func() error { return users.SetPassword("ana", "another horse battery") }},
		{"revoke", func() error { return users.RevokeTokens("ana") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, csrf := ts.PageSignIn(users, "ana")
			client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			pages := []struct {
				name string
				do   func() (*http.Response, error)
			}{
				{"files page", func() (*http.Response, error) { return client.Get(ts.URL + "/files") }},
				{"export", func() (*http.Response, error) { return client.Get(ts.URL + "/tables/" + table + "/export?format=csv") }},
				{"table page", func() (*http.Response, error) { return client.Get(ts.URL + "/tables/" + table) }},
				{"upload", func() (*http.Response, error) { return ts.PageUpload(client, csrf, "new.csv", []byte("x,y\n1,2\n")) }},
			}
			status := func(do func() (*http.Response, error)) (int, string) {
				resp, err := do()
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode, resp.Header.Get("Location")
			}
			for _, p := range pages[:3] {
				if code, _ := status(p.do); code != http.StatusOK {
					t.Fatalf("%s while signed in: %d", p.name, code)
				}
			}
			if err := tc.change(); err != nil {
				t.Fatal(err)
			}
			for _, p := range pages {
				if code, loc := status(p.do); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin?") {
					t.Errorf("%s with the old cookie after %s: %d %s, want 303 to the sign-in page", p.name, tc.name, code, loc)
				}
			}
			if token, err := users.AddToken("ana"); err == nil {
				ana = token
			}
			if _, m, _ := ts.Do("GET", "/v1/files", ana, nil, ""); len(m["files"].([]any)) != 1 {
				t.Errorf("the old cookie stored a file: %d files, want 1", len(m["files"].([]any)))
			}
		})
	}
}
