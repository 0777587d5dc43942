package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rbac"
)

// TestPolicySeesTheWork: the policy saw other attributes than the work:
// CSV content of 60,000 rows was a table of 0 rows (no approval), a
// declared table of 120,000 rows was stored as 0, an upload's rows were
// never seen, and "x.zip " or x.zip/ made a ZIP past a Format == 'zip'
// deny row. Each way a file or table is made now shows the policy what
// it holds.
func TestPolicySeesTheWork(t *testing.T) {
	t.Parallel()
	policy := "p, role:analyst, files.create, r.attrs.Format == 'zip', deny, allow\n" +
		"p, role:analyst, files.create, r.attrs.Rows > 100000, deny, allow\n" +
		"p, role:analyst, files.upload, r.attrs.Rows > 1000, deny, allow\n" + rbac.DefaultPolicy
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 8 << 20, OffloadProviders: []string{"crm"}}, Policy: policy})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")

	if code, m := ts.Call(ana, "files.create", map[string]any{"filename": "big.csv", "content": "n\n" + strings.Repeat("7\n", 60_000)}); code != http.StatusAccepted {
		t.Errorf("CSV content past 50,000 rows: got %d %v, want 202 (the analyst's approval row)", code, m)
	}
	var small strings.Builder
	small.WriteString("id\n")
	for i := range 100 {
		fmt.Fprintf(&small, "%d\n", i)
	}
	if code, m := ts.Call(ana, "files.create", map[string]any{"filename": "small.csv", "content": small.String()}); code != http.StatusOK {
		t.Errorf("CSV content of 100 rows: got %d %v, want 200", code, m)
	}

	rows := make([]any, 120_000)
	for i := range rows {
		rows[i] = []any{i}
	}
	if code, m := ts.Declare(ana, map[string]any{"provider": "crm", "columns": []any{"n"}, "rows": rows}); code != http.StatusForbidden {
		t.Errorf("a declared table of 120,000 rows: got %d %v, want 403", code, m)
	}

	code, m := ts.Upload(ana, "rows.csv", []byte(strings.Repeat("x\n", 2000)))
	if code != http.StatusForbidden {
		t.Errorf("an upload of 2,000 rows: got %d %v, want 403", code, m)
	}
	if _, list, _ := ts.Do("GET", "/v1/files?session_only=false", ana, nil, ""); len(list["files"].([]any)) != 1 {
		t.Errorf("files after the refused upload: %v", list["files"])
	}

	_, m = ts.Upload(ana, "a.txt", []byte("hello"))
	id := m["file"].(map[string]any)["id"].(string)
	for _, name := range []string{"x.zip", "x.zip ", "x.zip/", `x.zip\`, "x.zip\u00a0", "x.zip\u3000", "X.ZIP"} {
		if code, m := ts.Call(ana, "files.create", map[string]any{"filename": name, "file_ids": []any{id}}); code != http.StatusForbidden {
			t.Errorf("a ZIP named %q: got %d %v, want 403", name, code, m)
		}
	}
}
