package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/engine"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/serverdb"
)

// TestMain stops the ClickHouse cluster if a test started it.
func TestMain(m *testing.M) {
	code := m.Run()
	stopTestCluster()
	os.Exit(code)
}

type testServer struct {
	t   testing.TB
	url string
	dir string
	srv *Server
}

// newServer runs the real server over httptest with a fresh data directory
// and the given upload limit.
func newServer(t *testing.T, maxUpload int64) (*testServer, *rbac.Users) {
	t.Helper()
	return newServerWith(t, Config{MaxUpload: maxUpload})
}

func newServerWith(t *testing.T, cfg Config) (*testServer, *rbac.Users) {
	t.Helper()
	return newServerPolicy(t, cfg, rbac.DefaultPolicy)
}

func newServerPolicy(t *testing.T, cfg Config, policyText string) (*testServer, *rbac.Users) {
	t.Helper()
	return newServerFull(t, cfg, policyText, engine.Config{MemoryLimit: "256MB", MaxTempSize: "1GB"})
}

// newServerFull runs the real server with the given policy and engine
// configuration (its Dir, when empty, a new folder of the test's); with
// deps changing the services it is given.
func newServerFull(t testing.TB, cfg Config, policyText string, ecfg engine.Config, with ...func(*Deps)) (*testServer, *rbac.Users) {
	t.Helper()
	dir := ecfg.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	ecfg.Dir = dir
	eng, err := engine.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	users, err := rbac.OpenUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The policy is read from files, as the server does, so a test can
	// change it while the server runs.
	if err := rbac.WriteDefaults(filepath.Join(dir, "policy")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy", "policy.csv"), []byte(policyText), 0o600); err != nil {
		t.Fatal(err)
	}
	policy, err := rbac.OpenPolicy(filepath.Join(dir, "policy"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SigningKey == nil {
		cfg.SigningKey = bytes.Repeat([]byte("k"), 32)
	}
	system, err := serverdb.Open(context.Background(), eng.Dir())
	if err != nil {
		t.Fatal(err)
	}
	audit, err := rbac.OpenAudit(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = dir
	d := Deps{Engine: eng, System: system, Ingest: ingest.New(ingest.Config{}), Users: users, Policy: policy, Audit: audit}
	for _, w := range with {
		w(&d)
	}
	srv, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); eng.Close(); system.Close(); audit.Close() })
	return &testServer{t: t, url: hs.URL, dir: dir, srv: srv}, users
}

func addUser(t testing.TB, users *rbac.Users, name, role string) string {
	t.Helper()
	_, token, err := users.Add(name, role)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func (ts *testServer) do(method, path, token string, body io.Reader, contentType string) (int, map[string]any, []byte) {
	ts.t.Helper()
	req, _ := http.NewRequest(method, ts.url+path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("X-Chat-Session-Id", "chat-1")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}

func (ts *testServer) upload(token, filename string, content []byte) (int, map[string]any) {
	ts.t.Helper()
	var b bytes.Buffer
	return ts.uploadWith(token, filename, content, "", &b)
}

// uploadWith uploads with a query (?header_row=...), building the body in b.
func (ts *testServer) uploadWith(token, filename string, content []byte, query string, b *bytes.Buffer) (int, map[string]any) {
	ts.t.Helper()
	mw := multipart.NewWriter(b)
	w, _ := mw.CreateFormFile("file", filename)
	w.Write(content)
	mw.Close()
	code, m, _ := ts.do("POST", "/v1/files"+query, token, b, mw.FormDataContentType())
	return code, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// TestReadmeWalkthrough is the README's first steps: upload a CSV and an
// XLSX, see their schemas with identifiers as text, page rows, download,
// delete.
func TestReadmeWalkthrough(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	token := addUser(t, users, "ana", "analyst")

	code, m := ts.upload(token, "orders.csv", []byte("order_id,customer zip,amount,day\n000123,02139,12.50,2024-01-02\n000124,10001,7,2024-01-03\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload csv: got %d %v", code, m)
	}
	file := m["file"].(map[string]any)
	for _, k := range []string{"id", "filename", "content_type", "size", "created_at", "chat_session_id", "download_url", "table_id", "row_count", "column_count", "preview_url"} {
		if _, ok := file[k]; !ok {
			t.Errorf("descriptor lacks %q: %v", k, file)
		}
	}
	tables := m["tables"].([]any)
	cols := tables[0].(map[string]any)["columns"].([]any)
	wantTypes := []string{"text", "text", "decimal", "date"}
	for i, c := range cols {
		col := c.(map[string]any)
		if col["type"] != wantTypes[i] {
			t.Errorf("column %v: got %v, want %s", col["key"], col["type"], wantTypes[i])
		}
	}
	if !cols[0].(map[string]any)["identifier"].(bool) {
		t.Errorf("order_id is not marked an identifier")
	}

	xlsx, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "sheetjs", "AutoFilter.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	code, m = ts.upload(token, "AutoFilter.xlsx", xlsx)
	if code != http.StatusCreated {
		t.Fatalf("upload xlsx: got %d %v", code, m)
	}
	if n := len(m["tables"].([]any)); n != 11 {
		t.Errorf("xlsx: got %d tables, want 11 (one per sheet)", n)
	}

	tableID := file["table_id"].(string)
	code, m, _ = ts.do("GET", "/v1/tables/"+tableID, token, nil, "")
	if code != 200 || m["table"].(map[string]any)["import_report"] == nil {
		t.Fatalf("schema: got %d %v", code, m)
	}
	code, m, _ = ts.do("GET", "/v1/tables/"+tableID+"/rows?sort=amount&direction=desc&limit=1", token, nil, "")
	if code != 200 {
		t.Fatalf("rows: got %d %v", code, m)
	}
	if row := m["rows"].([]any)[0].([]any); row[0] != "000123" || row[1] != "02139" {
		t.Errorf("rows: got %v", row)
	}
	code, _, raw := ts.do("GET", "/v1/files/"+file["id"].(string)+"/content", token, nil, "")
	if code != 200 || !strings.HasPrefix(string(raw), "order_id,") {
		t.Errorf("content: got %d %q", code, raw)
	}
	code, m, _ = ts.do("GET", "/v1/files", token, nil, "")
	if code != 200 || len(m["files"].([]any)) != 2 {
		t.Errorf("list: got %d %v", code, m)
	}
	if code, _, _ = ts.do("DELETE", "/v1/files/"+file["id"].(string), token, nil, ""); code != http.StatusNoContent {
		t.Errorf("delete: got %d", code)
	}
	for _, p := range []string{"/v1/files/" + file["id"].(string), "/v1/tables/" + tableID, "/v1/files/" + file["id"].(string) + "/content"} {
		if code, m, _ = ts.do("GET", p, token, nil, ""); code != http.StatusNotFound {
			t.Errorf("after delete %s: got %d %v", p, code, m)
		}
	}
}

// TestOwnerIsolation: another owner's ids answer exactly like missing ones.
func TestOwnerIsolation(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	ana := addUser(t, users, "ana", "analyst")
	bob := addUser(t, users, "bob", "analyst")
	_, m := ts.upload(ana, "a.csv", []byte("x\n1\n"))
	file := m["file"].(map[string]any)
	id, tableID := file["id"].(string), file["table_id"].(string)
	missing := "f_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	for _, tc := range []struct{ method, path, missing string }{
		{"GET", "/v1/files/" + id, "/v1/files/" + missing},
		{"GET", "/v1/files/" + id + "/content", "/v1/files/" + missing + "/content"},
		{"DELETE", "/v1/files/" + id, "/v1/files/" + missing},
		{"GET", "/v1/tables/" + tableID, "/v1/tables/" + missing},
		{"GET", "/v1/tables/" + tableID + "/rows", "/v1/tables/" + missing + "/rows"},
		{"GET", "/v1/tables/" + id, "/v1/tables/" + missing},
	} {
		code, _, raw := ts.do(tc.method, tc.path, bob, nil, "")
		mcode, _, mraw := ts.do(tc.method, tc.missing, bob, nil, "")
		if code != http.StatusNotFound || mcode != http.StatusNotFound {
			t.Errorf("%s %s: got %d, missing id %d; want 404 for both", tc.method, tc.path, code, mcode)
		}
		// The body differs only by the id it echoes.
		if strings.ReplaceAll(string(raw), id, "X") != strings.ReplaceAll(strings.ReplaceAll(string(mraw), missing, "X"), tableID, "X") &&
			strings.ReplaceAll(string(raw), tableID, "X") != strings.ReplaceAll(string(mraw), missing, "X") {
			t.Errorf("%s %s: body %s differs from missing %s", tc.method, tc.path, raw, mraw)
		}
	}
	if _, m, _ := ts.do("GET", "/v1/files", bob, nil, ""); len(m["files"].([]any)) != 0 {
		t.Errorf("bob lists ana's files: %v", m)
	}
	if code, _, _ := ts.do("GET", "/v1/files/"+id, ana, nil, ""); code != 200 {
		t.Errorf("ana's own file: got %d", code)
	}
}

func TestUploadErrors(t *testing.T) {
	ts, users := newServer(t, 64<<10)
	ana := addUser(t, users, "ana", "analyst")
	viewer := addUser(t, users, "vic", "viewer")
	big := bytes.Repeat([]byte("a,b\n1,2\n"), 20<<10)
	tests := []struct {
		name     string
		token    string
		filename string
		content  []byte
		status   int
		code     string
	}{
		{"over the limit", ana, "big.csv", big, http.StatusRequestEntityTooLarge, "too_large"},
		{"no token", "", "a.csv", []byte("a\n1\n"), http.StatusUnauthorized, "unauthenticated"},
		{"bad token", "dd_nope", "a.csv", []byte("a\n1\n"), http.StatusUnauthorized, "unauthenticated"},
		{"viewer may not upload", viewer, "a.csv", []byte("a\n1\n"), http.StatusForbidden, "forbidden"},
		{"unknown type", ana, "a.exe", []byte("MZ"), http.StatusUnsupportedMediaType, "unsupported"},
		{"corrupt workbook", ana, "a.xlsx", []byte("PK\x03\x04garbage"), http.StatusBadRequest, "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.upload(tc.token, tc.filename, tc.content)
			if code != tc.status || errCode(m) != tc.code {
				t.Errorf("got %d %v, want %d %s", code, m, tc.status, tc.code)
			}
		})
	}
	code, m, _ := ts.do("POST", "/v1/files", ana, strings.NewReader("{}"), "application/json")
	if code != 400 || errCode(m) != "invalid" {
		t.Errorf("not multipart: got %d %v", code, m)
	}
	// The table is found before its address is read: a missing one (or
	// another owner's) answers 404 whatever its parameters.
	code, m, _ = ts.do("GET", "/v1/tables/t_aaaaaaaaaaaaaaaaaaaaaaaaaa/rows?limit=abc", ana, nil, "")
	if code != 404 || errCode(m) != "not_found" {
		t.Errorf("bad limit on a missing table: got %d %v", code, m)
	}
	code, m, _ = ts.do("GET", "/nope", ana, nil, "")
	if code != 404 || errCode(m) != "not_found" {
		t.Errorf("unknown route: got %d %v", code, m)
	}
}

func TestRowsPageErrors(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	ana := addUser(t, users, "ana", "analyst")
	_, m := ts.upload(ana, "a.csv", []byte("x,y\n1,2\n"))
	tid := m["file"].(map[string]any)["table_id"].(string)
	for _, q := range []string{"sort=nope", "sort=x&direction=sideways", "offset=-1", "limit=0", "limit=100000", "limit=abc",
		"nope=1", "o.x=eq", "o.x=gt&f.x=lots", "col=z", "summary=z", "g=z"} {
		code, m, _ := ts.do("GET", fmt.Sprintf("/v1/tables/%s/rows?%s", tid, q), ana, nil, "")
		if code != 400 || errCode(m) != "invalid" {
			t.Errorf("%s: got %d %v, want 400 invalid", q, code, m)
		}
	}
}
