package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rbac"
)

func TestApprovalRunsExactlyOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := apitest.New(t, apitest.Options{Config: api.Config{Now: clock, ApprovalTTL: time.Hour}})
	users := ts.Users
	vic := apitest.AddUser(t, users, "vic", "viewer")
	root := apitest.AddUser(t, users, "root", "admin")

	code, m := ts.Call(vic, "files.create", map[string]any{"filename": "note.txt", "content": "hello"})
	if code != http.StatusAccepted {
		t.Fatalf("viewer create: %d %v, want 202", code, m)
	}
	ap := m["approval"].(map[string]any)
	id := ap["id"].(string)
	if ap["status"] != "pending" || !strings.Contains(ap["reason"].(string), "role:viewer, files.create") {
		t.Errorf("approval %v", ap)
	}
	// The viewer sees their own pending call but may not approve it.
	if code, _, _ := ts.Do("GET", "/v1/approvals/"+id, vic, nil, ""); code != 200 {
		t.Errorf("caller fetch: %d", code)
	}
	if code, m, _ := ts.Do("POST", "/v1/approvals/"+id+"/approve", vic, nil, ""); code != http.StatusForbidden {
		t.Errorf("viewer approves: %d %v", code, m)
	}
	_, m, _ = ts.Do("GET", "/v1/approvals?status=pending", root, nil, "")
	if n := len(m["approvals"].([]any)); n != 1 {
		t.Errorf("pending for the approver: %d", n)
	}

	// Eight approvers at the same moment: one runs it.
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = ts.Do("POST", "/v1/approvals/"+id+"/approve", root, nil, "")
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case 200:
			ok++
		case http.StatusConflict:
		default:
			t.Errorf("concurrent approve: %d", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d approvals ran, want 1 (%v)", ok, codes)
	}
	// It ran as the viewer: the file is theirs, once.
	_, m, _ = ts.Do("GET", "/v1/files", vic, nil, "")
	if n := len(m["files"].([]any)); n != 1 {
		t.Errorf("viewer has %d files, want 1", n)
	}
	_, m, _ = ts.Do("GET", "/v1/files", root, nil, "")
	if n := len(m["files"].([]any)); n != 0 {
		t.Errorf("the approver got the file")
	}
	_, m, _ = ts.Do("GET", "/v1/approvals/"+id, vic, nil, "")
	a := m["approval"].(map[string]any)
	if a["status"] != "done" || a["decided_by"] != "root" || a["result"].(map[string]any)["file"] == nil {
		t.Errorf("result for the caller: %v", a)
	}
	if code, _, _ := ts.Do("POST", "/v1/approvals/"+id+"/approve", root, nil, ""); code != http.StatusConflict {
		t.Errorf("approve again: %d", code)
	}

	// Rejected calls never run; expired ones cannot be approved.
	_, m = ts.Call(vic, "files.create", map[string]any{"filename": "b.txt", "content": "x"})
	rej := m["approval"].(map[string]any)["id"].(string)
	if code, _, _ := ts.Do("POST", "/v1/approvals/"+rej+"/reject", root, nil, ""); code != 200 {
		t.Errorf("reject: %d", code)
	}
	if code, _, _ := ts.Do("POST", "/v1/approvals/"+rej+"/approve", root, nil, ""); code != http.StatusConflict {
		t.Errorf("approve a rejected call: %d", code)
	}
	_, m = ts.Call(vic, "files.create", map[string]any{"filename": "c.txt", "content": "x"})
	exp := m["approval"].(map[string]any)["id"].(string)
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	code, m, _ = ts.Do("POST", "/v1/approvals/"+exp+"/approve", root, nil, "")
	if code != http.StatusConflict || !strings.Contains(apitest.MustJSON(m), "expired") {
		t.Errorf("approve an expired call: %d %v", code, m)
	}
	_, m, _ = ts.Do("GET", "/v1/files", vic, nil, "")
	if n := len(m["files"].([]any)); n != 1 {
		t.Errorf("viewer has %d files after reject and expiry, want 1", n)
	}
}

func TestWebSessions(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := apitest.New(t, apitest.Options{Config: api.Config{Now: clock}})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, _, resp := ts.SignIn("ana", "wrong password!"); resp.StatusCode != 401 {
		t.Errorf("wrong password: %d", resp.StatusCode)
	}
	client, csrf, resp := ts.SignIn("ana", "correct horse battery")
	if resp.StatusCode != 200 || csrf == "" {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	ck := resp.Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure || ck.MaxAge <= 0 {
		t.Errorf("cookie %+v", ck)
	}
	// A second sign-in gets a new cookie.
	_, csrf2, resp2 := ts.SignIn("ana", "correct horse battery")
	if resp2.Cookies()[0].Value == ck.Value || csrf2 == csrf {
		t.Errorf("the session was not renewed at sign-in")
	}
	do := func(method, path, token string, body string) int {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("X-CSRF-Token", token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	create := `{"arguments": {"filename": "a.txt", "content": "x"}}`
	if code := do("GET", "/v1/files", "", ""); code != 200 {
		t.Errorf("GET with cookie: %d", code)
	}
	if code := do("POST", "/v1/tools/files.create", "", create); code != http.StatusForbidden {
		t.Errorf("POST without CSRF: %d", code)
	}
	if code := do("POST", "/v1/tools/files.create", "wrong", create); code != http.StatusForbidden {
		t.Errorf("POST with a wrong CSRF token: %d", code)
	}
	if code := do("POST", "/v1/tools/files.create", csrf, create); code != 200 {
		t.Errorf("POST with CSRF: %d", code)
	}
	if code := do("DELETE", "/v1/session", csrf, ""); code != http.StatusNoContent {
		t.Errorf("sign out: %d", code)
	}
	if code := do("GET", "/v1/files", "", ""); code != 401 {
		t.Errorf("after sign-out: %d", code)
	}
	// Expiry.
	c3, _, _ := ts.SignIn("ana", "correct horse battery")
	client = c3
	mu.Lock()
	now = now.Add(api.SessionTTL + time.Minute)
	mu.Unlock()
	if code := do("GET", "/v1/files", "", ""); code != 401 {
		t.Errorf("after expiry: %d", code)
	}
}

func TestSignOutRevokes(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	apitest.AddUser(t, users, "ana", "analyst")
	users.SetPassword("ana", "correct horse battery")
	_, csrf, resp := ts.SignIn("ana", "correct horse battery")
	ck := resp.Cookies()[0]
	send := func(method string, withCSRF bool) int {
		req, _ := http.NewRequest(method, ts.URL+"/v1/session", nil)
		req.AddCookie(ck)
		if withCSRF {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	if code := send("DELETE", false); code != 403 {
		t.Errorf("sign out without CSRF: %d", code)
	}
	if code := send("DELETE", true); code != 204 {
		t.Errorf("sign out: %d", code)
	}
	if code := send("GET", false); code != 401 {
		t.Errorf("revoked cookie: %d", code)
	}
}

func TestActingFor(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	bot := apitest.AddUser(t, users, "chatbot", "platform")
	ana := apitest.AddUser(t, users, "ana", "analyst")
	apitest.AddUser(t, users, "ben", "analyst")
	root := apitest.AddUser(t, users, "root", "admin")
	call := func(token, onBehalf string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]any{"arguments": map[string]any{"filename": "x.txt", "content": "hi"}})
		req, _ := http.NewRequest("POST", ts.URL+"/v1/tools/files.create", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-On-Behalf-Of", onBehalf)
		req.Header.Set("X-Chat-Session-Id", "chat-9")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := call(bot, "ana"); code != 200 {
		t.Fatalf("platform for ana: %d %v", code, m)
	}
	_, m, _ := ts.Do("GET", "/v1/files", ana, nil, "")
	if n := len(m["files"].([]any)); n != 1 {
		t.Errorf("ana owns %d files, want 1", n)
	}
	if code, m := call(ana, "ben"); code != http.StatusForbidden || !strings.Contains(apitest.MustJSON(m), "may not act for") {
		t.Errorf("analyst acting for another: %d %v", code, m)
	}
	if code, _ := call(bot, "nobody"); code != http.StatusForbidden {
		t.Errorf("unknown user: %d", code)
	}
	// The platform may not use tools in its own name.
	if code, _ := ts.Call(bot, "files.read", map[string]any{}); code != http.StatusForbidden {
		t.Errorf("platform's own call: %d", code)
	}
	// The audit records both identities.
	_, m, _ = ts.Do("GET", "/v1/audit?user=chatbot", root, nil, "")
	found := false
	for _, e := range m["entries"].([]any) {
		en := e.(map[string]any)
		if en["action"] == "files.create" && en["user"] == "ana" && en["actor"] == "chatbot" && en["chat_session_id"] == "chat-9" &&
			en["decision"] == "allow" && en["outcome"] == "ok" && en["args_sha256"] != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit entry for the platform's call: %v", m)
	}
	if code, _, _ := ts.Do("GET", "/v1/audit", ana, nil, ""); code != http.StatusForbidden {
		t.Errorf("analyst reads the audit: %d", code)
	}
	entries, err := rbac.ReadAudit(ts.Dir, "", 1000)
	if err != nil || len(entries) < 5 {
		t.Errorf("audit file: %d entries, %v", len(entries), err)
	}
}

// TestOtherOwnersFileUnreachable tries every path that takes an id with
// another owner's file and table.
func TestOtherOwnersFileUnreachable(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	bob := apitest.AddUser(t, users, "bob", "admin")
	_, m := ts.Upload(ana, "a.csv", []byte(apitest.OrdersCSV))
	f := m["file"].(map[string]any)
	fid, tid := f["id"].(string), f["table_id"].(string)
	for _, p := range []string{"/v1/files/" + fid, "/v1/files/" + fid + "/content", "/v1/tables/" + tid, "/v1/tables/" + fid,
		"/v1/tables/" + tid + "/rows", "/v1/tables/" + tid + "/export?format=csv"} {
		if code, _, body := ts.Do("GET", p, bob, nil, ""); code != 404 {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}
	if code, _, _ := ts.Do("DELETE", "/v1/files/"+fid, bob, nil, ""); code != 404 {
		t.Errorf("DELETE: %d", code)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"files.query_table", map[string]any{"file_id": fid}},
		{"files.query_table", map[string]any{"file_id": tid, "show": true}},
		{"files.read", map[string]any{"file_id": fid}},
		{"files.create", map[string]any{"filename": "x.csv", "source_file_id": tid}},
		{"files.create", map[string]any{"filename": "x.zip", "file_ids": []any{fid}}},
	} {
		if code, m := ts.Call(bob, tc.tool, tc.args); code != 404 {
			t.Errorf("%s %v: %d %v", tc.tool, tc.args, code, m)
		}
	}
	// A signed link is for its owner's file only.
	link := f["download_url"].(string)
	if code, _ := ts.Get("", strings.Replace(link, fid, "f_aaaaaaaaaaaaaaaaaaaaaaaaaa", 1)); code != 401 {
		t.Errorf("signed link moved to another id: %d", code)
	}
}
