package rest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestReadmeWalkthrough is the README's first steps: upload a CSV and an
// XLSX, see their schemas with identifiers as text, page rows, download,
// delete.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")

	code, m := ts.Upload(token, "orders.csv", []byte("order_id,customer zip,amount,day\n000123,02139,12.50,2024-01-02\n000124,10001,7,2024-01-03\n"))
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
	code, m = ts.Upload(token, "AutoFilter.xlsx", xlsx)
	if code != http.StatusCreated {
		t.Fatalf("upload xlsx: got %d %v", code, m)
	}
	if n := len(m["tables"].([]any)); n != 11 {
		t.Errorf("xlsx: got %d tables, want 11 (one per sheet)", n)
	}

	tableID := file["table_id"].(string)
	code, m, _ = ts.Do("GET", "/v1/tables/"+tableID, token, nil, "")
	if code != 200 || m["table"].(map[string]any)["import_report"] == nil {
		t.Fatalf("schema: got %d %v", code, m)
	}
	code, m, _ = ts.Do("GET", "/v1/tables/"+tableID+"/rows?sort=amount&direction=desc&limit=1", token, nil, "")
	if code != 200 {
		t.Fatalf("rows: got %d %v", code, m)
	}
	if row := m["rows"].([]any)[0].([]any); row[0] != "000123" || row[1] != "02139" {
		t.Errorf("rows: got %v", row)
	}
	code, _, raw := ts.Do("GET", "/v1/files/"+file["id"].(string)+"/content", token, nil, "")
	if code != 200 || !strings.HasPrefix(string(raw), "order_id,") {
		t.Errorf("content: got %d %q", code, raw)
	}
	code, m, _ = ts.Do("GET", "/v1/files", token, nil, "")
	if code != 200 || len(m["files"].([]any)) != 2 {
		t.Errorf("list: got %d %v", code, m)
	}
	if code, _, _ = ts.Do("DELETE", "/v1/files/"+file["id"].(string), token, nil, ""); code != http.StatusNoContent {
		t.Errorf("delete: got %d", code)
	}
	for _, p := range []string{"/v1/files/" + file["id"].(string), "/v1/tables/" + tableID, "/v1/files/" + file["id"].(string) + "/content"} {
		if code, m, _ = ts.Do("GET", p, token, nil, ""); code != http.StatusNotFound {
			t.Errorf("after delete %s: got %d %v", p, code, m)
		}
	}
}

// TestOwnerIsolation: another owner's ids answer exactly like missing ones.
func TestOwnerIsolation(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	bob := apitest.AddUser(t, users, "bob", "analyst")
	_, m := ts.Upload(ana, "a.csv", []byte("x\n1\n"))
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
		code, _, raw := ts.Do(tc.method, tc.path, bob, nil, "")
		mcode, _, mraw := ts.Do(tc.method, tc.missing, bob, nil, "")
		if code != http.StatusNotFound || mcode != http.StatusNotFound {
			t.Errorf("%s %s: got %d, missing id %d; want 404 for both", tc.method, tc.path, code, mcode)
		}
		// The body differs only by the id it echoes.
		if strings.ReplaceAll(string(raw), id, "X") != strings.ReplaceAll(strings.ReplaceAll(string(mraw), missing, "X"), tableID, "X") &&
			strings.ReplaceAll(string(raw), tableID, "X") != strings.ReplaceAll(string(mraw), missing, "X") {
			t.Errorf("%s %s: body %s differs from missing %s", tc.method, tc.path, raw, mraw)
		}
	}
	if _, m, _ := ts.Do("GET", "/v1/files", bob, nil, ""); len(m["files"].([]any)) != 0 {
		t.Errorf("bob lists ana's files: %v", m)
	}
	if code, _, _ := ts.Do("GET", "/v1/files/"+id, ana, nil, ""); code != 200 {
		t.Errorf("ana's own file: got %d", code)
	}
}

func TestUploadErrors(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 64 << 10})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	viewer := apitest.AddUser(t, users, "vic", "viewer")
	big := bytes.Repeat([]byte("a,b\n1,2\n"), 20<<10)
	upload := func(name, token, filename string, content []byte, status int, code string) apitest.Scenario {
		body, ctype := apitest.Multipart(filename, content)
		return apitest.Scenario{Name: name, Method: "POST", URL: "/v1/files", Token: token, Body: body, ContentType: ctype,
			ExpectedStatus: status, ExpectedCode: code}
	}
	apitest.Run(t, ts, []apitest.Scenario{
		upload("over the limit", ana, "big.csv", big, http.StatusRequestEntityTooLarge, "too_large"),
		upload("no token", "", "a.csv", []byte("a\n1\n"), http.StatusUnauthorized, "unauthenticated"),
		upload("bad token", "dd_nope", "a.csv", []byte("a\n1\n"), http.StatusUnauthorized, "unauthenticated"),
		upload("viewer may not upload", viewer, "a.csv", []byte("a\n1\n"), http.StatusForbidden, "forbidden"),
		upload("unknown type", ana, "a.exe", []byte("MZ"), http.StatusUnsupportedMediaType, "unsupported"),
		upload("corrupt workbook", ana, "a.xlsx", []byte("PK\x03\x04garbage"), http.StatusBadRequest, "invalid"),
		{Name: "not multipart", Method: "POST", URL: "/v1/files", Token: ana, Body: "{}",
			ExpectedStatus: http.StatusBadRequest, ExpectedCode: "invalid"},
		// The table is found before its address is read: a missing one (or
		// another owner's) answers 404 whatever its parameters.
		{Name: "bad limit on a missing table", Method: "GET", URL: "/v1/tables/t_aaaaaaaaaaaaaaaaaaaaaaaaaa/rows?limit=abc", Token: ana,
			ExpectedStatus: http.StatusNotFound, ExpectedCode: "not_found"},
		{Name: "unknown route", Method: "GET", URL: "/nope", Token: ana, ExpectedStatus: http.StatusNotFound, ExpectedCode: "not_found"},
	})
}

func TestRowsPageErrors(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	_, m := ts.Upload(ana, "a.csv", []byte("x,y\n1,2\n"))
	tid := m["file"].(map[string]any)["table_id"].(string)
	var scenarios []apitest.Scenario
	for _, q := range []string{"sort=nope", "sort=x&direction=sideways", "offset=-1", "limit=0", "limit=100000", "limit=abc",
		"nope=1", "o.x=eq", "o.x=gt&f.x=lots", "col=z", "summary=z", "g=z"} {
		scenarios = append(scenarios, apitest.Scenario{Name: q, Method: "GET", URL: fmt.Sprintf("/v1/tables/%s/rows?%s", tid, q), Token: ana,
			ExpectedStatus: http.StatusBadRequest, ExpectedCode: "invalid"})
	}
	apitest.Run(t, ts, scenarios)
}
