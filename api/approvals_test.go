package api

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/rbac"
)

// bigRows returns n rows of long text.
func bigRows(n int) []any {
	rows := make([]any, n)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("%06d", i), strings.Repeat("long text ", 8)}
	}
	return rows
}

func dirSize(t *testing.T, paths ...string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		filepath.Walk(p, func(_ string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				n += info.Size()
			}
			return nil
		})
	}
	return n
}

// TestApprovalQueueStaysSmall: eight big calls waiting for approval made
// the queue answer 413 for everyone, for good (826 MB system database).
// Now a waiting call's arguments are a file of their own, within caps per
// call and per user's queue; lists carry summaries only, in pages.
func TestApprovalQueueStaysSmall(t *testing.T) {
	ts, users := newServerWith(t, Config{MaxPendingCall: 512 << 10})
	vic := addUser(t, users, "vic", "viewer")
	root := addUser(t, users, "root", "admin")
	rows := bigRows(2000)
	args := map[string]any{"filename": "big.csv", "columns": []any{"id", "note"}, "rows": rows}
	var ids []string
	for i := range DefaultMaxPendingCalls {
		code, m := ts.call(vic, "files.create", args)
		if code != http.StatusAccepted {
			t.Fatalf("call %d: %d %v", i, code, m)
		}
		ids = append(ids, m["approval"].(map[string]any)["id"].(string))
	}
	// The user's queue is full: the next call is refused, naming the limit.
	code, m := ts.call(vic, "files.create", map[string]any{"filename": "n.txt", "content": "x"})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(mustJSON(m), fmt.Sprint(DefaultMaxPendingCalls)) {
		t.Errorf("call past the queue's limit: %d %v", code, m)
	}
	// One call past the per-call limit.
	other := addUser(t, users, "val", "viewer")
	code, m = ts.call(other, "files.create", map[string]any{"filename": "big.csv", "columns": []any{"id", "note"}, "rows": bigRows(6000)})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(mustJSON(m), "524288") {
		t.Errorf("call past the per-call limit: %d %v", code, m)
	}
	// The queue's own database stays small; the arguments are apart.
	sys := dirSize(t, filepath.Join(ts.dir, "system.duckdb"), filepath.Join(ts.dir, "system.duckdb.wal"))
	apart := dirSize(t, filepath.Join(ts.dir, "approvals"))
	if sys > 8<<20 || apart < 100*180<<10 {
		t.Errorf("system database %d bytes, arguments apart %d bytes", sys, apart)
	}
	// A page of summaries: tool, caller, rows, bytes, created, expires.
	code, m, raw := ts.do("GET", "/v1/approvals?limit=50", root, nil, "")
	if code != 200 || len(raw) > 64<<10 {
		t.Fatalf("list: %d, %d bytes", code, len(raw))
	}
	list := m["approvals"].([]any)
	first := list[0].(map[string]any)
	if len(list) != 50 || m["has_more"] != true || m["next_offset"].(float64) != 50 {
		t.Errorf("page: %d entries, has_more %v, next %v", len(list), m["has_more"], m["next_offset"])
	}
	if _, ok := first["arguments"]; ok || first["rows"].(float64) != 2000 || first["bytes"].(float64) < 180<<10 ||
		first["user_name"] != "vic" || first["tool"] != "files.create" || first["created_at"] == nil || first["expires_at"] == nil {
		t.Errorf("summary %v", first)
	}
	_, m, _ = ts.do("GET", "/v1/approvals?limit=50&offset=50&status=pending", root, nil, "")
	if n := len(m["approvals"].([]any)); n != 50 || m["has_more"] != false {
		t.Errorf("second page: %d, has_more %v", n, m["has_more"])
	}
	client, _ := ts.pageSignIn(users, "root")
	resp, err := client.Get(ts.url + "/approvals")
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	page.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || page.Len() > 256<<10 || !strings.Contains(page.String(), "2000 rows") {
		t.Errorf("page: %d, %d bytes", resp.StatusCode, page.Len())
	}
	// An approved big call runs from its stored arguments, once.
	code, m, _ = ts.do("POST", "/v1/approvals/"+ids[0]+"/approve", root, nil, "")
	if a := m["approval"].(map[string]any); code != 200 || a["status"] != "done" {
		t.Fatalf("approve: %d %v", code, m)
	}
	_, m, _ = ts.do("GET", "/v1/files", vic, nil, "")
	if f := m["files"].([]any); len(f) != 1 || f[0].(map[string]any)["row_count"].(float64) != 2000 {
		t.Errorf("files after approval: %v", f)
	}
	// Rejected calls leave nothing behind.
	for _, id := range ids[1:] {
		if code, _, _ := ts.do("POST", "/v1/approvals/"+id+"/reject", root, nil, ""); code != 200 {
			t.Fatalf("reject: %d", code)
		}
	}
	if n := dirSize(t, filepath.Join(ts.dir, "approvals")); n != 0 {
		t.Errorf("%d bytes of arguments remain after every call was decided", n)
	}
	if code, _ := ts.call(vic, "files.create", map[string]any{"filename": "n.txt", "content": "x"}); code != http.StatusAccepted {
		t.Errorf("a call after the queue emptied: %d", code)
	}
}

// pageSignIn gives a user a password and signs in to the web page.
func (ts *testServer) pageSignIn(users *rbac.Users, name string) (*http.Client, string) {
	ts.t.Helper()
	if err := users.SetPassword(name, "correct horse battery"); err != nil {
		ts.t.Fatal(err)
	}
	client, csrf, resp := ts.signIn(name, "correct horse battery")
	if resp.StatusCode != 200 {
		ts.t.Fatalf("sign in: %d", resp.StatusCode)
	}
	return client, csrf
}
