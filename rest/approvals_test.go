package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/toolcall"
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

// TestApprovalOfAKeptBody: a call whose body was kept in a file, not in
// memory, waits for approval with every row and runs with them once
// approved.
func TestApprovalOfAKeptBody(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{})
	users := ts.Users
	vic := apitest.AddUser(t, users, "vic", "viewer")
	root := apitest.AddUser(t, users, "root", "admin")
	rows := bigRows(20_000)
	body, _ := json.Marshal(map[string]any{"arguments": map[string]any{"filename": "big.csv", "columns": []any{"id", "note"}, "rows": rows}})
	if len(body) <= toolcall.BodyInMemory {
		t.Fatalf("the body has %d bytes, not more than the %d held in memory", len(body), toolcall.BodyInMemory)
	}
	code, m, raw := ts.Do("POST", "/v1/tools/files.create", vic, bytes.NewReader(body), "application/json")
	if code != http.StatusAccepted {
		t.Fatalf("a viewer's large call: %d %.300s, want 202", code, raw)
	}
	id := m["approval"].(map[string]any)["id"].(string)
	if code, m, raw = ts.Do("POST", "/v1/approvals/"+id+"/approve", root, nil, ""); code != http.StatusOK || m["approval"].(map[string]any)["status"] != "done" {
		t.Fatalf("approve: %d %.300s", code, raw)
	}
	_, m, _ = ts.Do("GET", "/v1/files", vic, nil, "")
	if f := m["files"].([]any); len(f) != 1 || f[0].(map[string]any)["row_count"].(float64) != 20_000 {
		t.Errorf("files after approval: %v", f)
	}
}

// TestApprovalQueueStaysSmall: eight big calls waiting for approval made
// the queue answer 413 for everyone, for good (826 MB system database).
// Now a waiting call's arguments are a file of their own, within caps per
// call and per user's queue; lists carry summaries only, in pages.
func TestApprovalQueueStaysSmall(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxPendingCall: 512 << 10}})
	users := ts.Users
	vic := apitest.AddUser(t, users, "vic", "viewer")
	root := apitest.AddUser(t, users, "root", "admin")
	rows := bigRows(2000)
	args := map[string]any{"filename": "big.csv", "columns": []any{"id", "note"}, "rows": rows}
	var ids []string
	for i := range toolcall.DefaultMaxPendingCalls {
		code, m := ts.Call(vic, "files.create", args)
		if code != http.StatusAccepted {
			t.Fatalf("call %d: %d %v", i, code, m)
		}
		ids = append(ids, m["approval"].(map[string]any)["id"].(string))
	}
	// The user's queue is full: the next call is refused, naming the limit.
	code, m := ts.Call(vic, "files.create", map[string]any{"filename": "n.txt", "content": "x"})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(apitest.MustJSON(m), fmt.Sprint(toolcall.DefaultMaxPendingCalls)) {
		t.Errorf("call past the queue's limit: %d %v", code, m)
	}
	// One call past the per-call limit.
	other := apitest.AddUser(t, users, "val", "viewer")
	code, m = ts.Call(other, "files.create", map[string]any{"filename": "big.csv", "columns": []any{"id", "note"}, "rows": bigRows(6000)})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(apitest.MustJSON(m), "524288") {
		t.Errorf("call past the per-call limit: %d %v", code, m)
	}
	// The queue's own database stays small; the arguments are apart.
	sys := dirSize(t, filepath.Join(ts.Dir, "system.duckdb"), filepath.Join(ts.Dir, "system.duckdb.wal"))
	apart := dirSize(t, filepath.Join(ts.Dir, "approvals"))
	if sys > 8<<20 || apart < 100*180<<10 {
		t.Errorf("system database %d bytes, arguments apart %d bytes", sys, apart)
	}
	// A page of summaries: tool, caller, rows, bytes, created, expires.
	code, m, raw := ts.Do("GET", "/v1/approvals?limit=50", root, nil, "")
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
	_, m, _ = ts.Do("GET", "/v1/approvals?limit=50&offset=50&status=pending", root, nil, "")
	if n := len(m["approvals"].([]any)); n != 50 || m["has_more"] != false {
		t.Errorf("second page: %d, has_more %v", n, m["has_more"])
	}
	client, _ := ts.PageSignIn(users, "root")
	resp, err := client.Get(ts.URL + "/approvals")
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
	code, m, _ = ts.Do("POST", "/v1/approvals/"+ids[0]+"/approve", root, nil, "")
	if a := m["approval"].(map[string]any); code != 200 || a["status"] != "done" {
		t.Fatalf("approve: %d %v", code, m)
	}
	_, m, _ = ts.Do("GET", "/v1/files", vic, nil, "")
	if f := m["files"].([]any); len(f) != 1 || f[0].(map[string]any)["row_count"].(float64) != 2000 {
		t.Errorf("files after approval: %v", f)
	}
	// Rejected calls leave nothing behind.
	for _, id := range ids[1:] {
		if code, _, _ := ts.Do("POST", "/v1/approvals/"+id+"/reject", root, nil, ""); code != 200 {
			t.Fatalf("reject: %d", code)
		}
	}
	if n := dirSize(t, filepath.Join(ts.Dir, "approvals")); n != 0 {
		t.Errorf("%d bytes of arguments remain after every call was decided", n)
	}
	if code, _ := ts.Call(vic, "files.create", map[string]any{"filename": "n.txt", "content": "x"}); code != http.StatusAccepted {
		t.Errorf("a call after the queue emptied: %d", code)
	}
}

// TestCopyPolicySeesRows: files.create with source_file_id of a big table
// ran at once while the same rows sent inline waited for approval; the
// policy now sees the source table's rows, a ZIP its members' bytes, and a
// shown derived view its matched rows.
func TestCopyPolicySeesRows(t *testing.T) {
	t.Parallel()
	policy := "p, role:analyst, files.create, r.attrs.Format == 'zip' && r.attrs.Bytes > 100000, approve, allow\n" + rbac.DefaultPolicy
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 4 << 20}, Policy: policy})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	upload := func(name string, rows int) string {
		code, m := ts.Upload(ana, name, apitest.RowsCSV(rows))
		if code != http.StatusCreated {
			t.Fatalf("upload %s: %d %v", name, code, m)
		}
		return m["file"].(map[string]any)["id"].(string)
	}
	big, small := upload("big.csv", 50001), upload("small.csv", 50000)
	tests := []struct {
		name string
		args map[string]any
		want int
	}{
		{"copy of 50,001 rows waits", map[string]any{"filename": "copy.xlsx", "source_file_id": big}, http.StatusAccepted},
		{"copy of 50,000 rows runs", map[string]any{"filename": "copy.csv", "source_file_id": small}, http.StatusOK},
		{"zip of big members waits", map[string]any{"filename": "all.zip", "file_ids": []any{big, small}}, http.StatusAccepted},
		{"copy of another's id is not found", map[string]any{"filename": "c.csv", "source_file_id": "f_aaaaaaaaaaaaaaaaaaaaaaaaaa"}, http.StatusNotFound},
	}
	for _, tc := range tests {
		code, m := ts.Call(ana, "files.create", tc.args)
		if code != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, code, m, tc.want)
		}
	}
	// The waiting copy's summary counts its source table's rows.
	_, m, _ := ts.Do("GET", "/v1/approvals?limit=10", ana, nil, "")
	if list := m["approvals"].([]any); len(list) != 2 || list[1].(map[string]any)["rows"].(float64) != 50001 {
		t.Errorf("waiting calls: %v", list)
	}
	query := func(filters []any) (int, map[string]any) {
		return ts.Call(ana, "files.query_table", map[string]any{"file_id": big, "show": true, "filters": filters})
	}
	if code, m := query([]any{map[string]any{"column": "id", "op": "gte", "value": 0}}); code != http.StatusAccepted {
		t.Errorf("showing a derived view of 50,001 rows: %d %v", code, m)
	}
	if code, m := query([]any{map[string]any{"column": "id", "op": "gte", "value": 1}}); code != http.StatusOK {
		t.Errorf("showing a derived view of 50,000 rows: %d %v", code, m)
	}
}

// TestPolicyCheckSeesRows: `datadesk policy check` decides a copy on the
// source table's rows, like the server.
func TestPolicyCheckSeesRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	users, err := rbac.OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	user, _, err := users.Add("ana", "analyst")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Dir: dir, MemoryLimit: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	store, release, err := eng.Acquire(ctx, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(store.IncomingDir(), "big.csv")
	if err := os.WriteFile(tmp, apitest.RowsCSV(50001), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ingest.New(ingest.Config{}).Read(ctx, tmp, "big.csv", store.IncomingDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := store.AddFile(ctx, engine.NewFile{Filename: "big.csv", ContentType: "text/csv", TempPath: tmp, Tables: res.Tables})
	res.Close()
	release()
	if err != nil {
		t.Fatal(err)
	}
	p, err := rbac.NewPolicy(rbac.DefaultPolicy)
	if err != nil {
		t.Fatal(err)
	}
	d, err := toolcall.Check(ctx, p, eng, user, "files.create", map[string]any{"filename": "c.xlsx", "source_file_id": f.ID})
	if err != nil || d.Effect != rbac.Approve || !strings.Contains(d.Reason, "r.attrs.Rows > 50000") {
		t.Errorf("policy check of a copy of 50,001 rows: %v %v", d, err)
	}
}

// TestApprovalRedecided: an approved call ran even after the policy came to
// deny it, and an admin could approve their own call. Now an approval
// decides again (a deny since then ends the call denied, and it does not
// run), and a call waits for someone else unless a row grants
// approvals.decide_own.
func TestApprovalRedecided(t *testing.T) {
	t.Parallel()
	policy := "p, role:admin, files.create, true, approve, allow\n" + rbac.DefaultPolicy
	ts := apitest.New(t, apitest.Options{Policy: policy})
	users := ts.Users
	vic := apitest.AddUser(t, users, "vic", "viewer")
	root := apitest.AddUser(t, users, "root", "admin")
	boss := apitest.AddUser(t, users, "boss", "admin")
	create := func(token string) string {
		code, m := ts.Call(token, "files.create", map[string]any{"filename": "n.txt", "content": "x"})
		if code != http.StatusAccepted {
			t.Fatalf("create: %d %v", code, m)
		}
		return m["approval"].(map[string]any)["id"].(string)
	}
	decide := func(token, id string) (int, map[string]any) {
		code, m, _ := ts.Do("POST", "/v1/approvals/"+id+"/approve", token, nil, "")
		a, _ := m["approval"].(map[string]any)
		return code, a
	}
	// Self-approval.
	own := create(root)
	if code, a := decide(root, own); code != http.StatusForbidden {
		t.Errorf("an admin approves their own call: %d %v", code, a)
	}
	if code, a := decide(boss, own); code != 200 || a["status"] != "done" {
		t.Errorf("another admin approves: %d %v", code, a)
	}
	// A deny since the call was made wins.
	id, id2 := create(vic), create(vic)
	policyPath := filepath.Join(ts.Dir, "policy", "policy.csv")
	if err := os.WriteFile(policyPath, []byte("p, user:vic, files.create, true, deny, allow\n"+policy), 0o600); err != nil {
		t.Fatal(err)
	}
	code, a := decide(root, id)
	if code != 200 || a["status"] != "denied" || a["error_code"] != "forbidden" || !strings.Contains(apitest.MustJSON(a), "user:vic") {
		t.Errorf("approve after the policy came to deny: %d %v", code, a)
	}
	// The page says so too.
	client, csrf := ts.PageSignIn(users, "boss")
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.PostForm(ts.URL+"/approvals/"+id2+"/approve", url.Values{"csrf_token": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc, _ := url.QueryUnescape(resp.Header.Get("Location")); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "Not run: the policy now denies") {
		t.Errorf("page approval after the policy came to deny: %d %s", resp.StatusCode, loc)
	}
	_, m, _ := ts.Do("GET", "/v1/files", vic, nil, "")
	if n := len(m["files"].([]any)); n != 0 {
		t.Errorf("the denied calls ran: vic has %d files", n)
	}
	// A row may let approvers decide their own calls.
	if err := os.WriteFile(policyPath, []byte("p, role:admin, approvals.decide_own, true, allow, allow\n"+policy), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, a := decide(root, create(root)); code != 200 || a["status"] != "done" {
		t.Errorf("self-approval granted by a row: %d %v", code, a)
	}
}
