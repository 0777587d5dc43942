package rest_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestReadAgainWithHeaderRow: a person corrects where a file's header is,
// at upload (header_row, sheet) or later on a stored file without sending
// it again; the descriptor says how each table was read.
func TestReadAgainWithHeaderRow(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	deaths, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", "public", "deaths.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	code, m := ts.Upload(token, "deaths.xlsx", deaths)
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	summary := func(m map[string]any, i int) map[string]any {
		return m["file"].(map[string]any)["tables"].([]any)[i].(map[string]any)
	}
	if s := summary(m, 0); s["header_row"] != float64(5) || s["header_asked"] != nil || s["rows_kept_out"] != float64(8) || s["row_count"] != float64(10) {
		t.Errorf("found: %v", s)
	}
	id := m["file"].(map[string]any)["id"].(string)

	// At upload: the header named for one sheet.
	var b bytes.Buffer
	code, m = ts.UploadWith(token, "deaths.xlsx", deaths, "?header_row=3&sheet=other", &b)
	if code != http.StatusCreated {
		t.Fatalf("upload with header_row: %d %v", code, m)
	}
	if s := summary(m, 1); s["header_row"] != float64(3) || s["header_asked"] != true || s["row_count"] != float64(12) {
		t.Errorf("asked for sheet other: %v", s)
	}
	if s := summary(m, 0); s["header_row"] != float64(5) || s["header_asked"] != nil {
		t.Errorf("sheet arts, not asked: %v", s)
	}

	// Later, without the bytes: a new file, the stored one unchanged.
	code, m, raw := ts.DoJSON("POST", "/v1/files/"+id+"/read", token, map[string]any{"header_row": 4, "sheet": "arts"})
	if code != http.StatusCreated {
		t.Fatalf("read again: %d %s", code, raw)
	}
	if s := summary(m, 0); s["header_row"] != float64(4) || s["header_asked"] != true || s["row_count"] != float64(11) {
		t.Errorf("read again: %v", s)
	}
	if m["file"].(map[string]any)["id"] == id {
		t.Errorf("reading again replaced the file")
	}
	tables := m["tables"].([]any)
	if notes := apitest.MustJSON(tables[0].(map[string]any)["import_report"]); !strings.Contains(notes, "the header is row 4, as asked") {
		t.Errorf("the report does not say the header was asked for: %s", notes)
	}

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"header_row": 5000}, "header_row"},
		{map[string]any{"header_row": -1}, "header_row"},
		{map[string]any{"header_row": 200}, "header_row"},
		{map[string]any{"header_row": 3, "sheet": "nope"}, "sheet"},
		{map[string]any{"sheet": "arts"}, "sheet"},
		{map[string]any{"header": 3}, ""},
	} {
		code, m, raw := ts.DoJSON("POST", "/v1/files/"+id+"/read", token, tc.body)
		e, _ := m["error"].(map[string]any)
		if code != http.StatusBadRequest || tc.field != "" && e["field"] != tc.field {
			t.Errorf("%v: got %d %s, want 400 naming %s", tc.body, code, raw, tc.field)
		}
	}
	if code, _, raw := ts.DoJSON("POST", "/v1/files/f_nosuchfileatall0000000000/read", token, map[string]any{"header_row": 2}); code != http.StatusNotFound {
		t.Errorf("another's or no file: %d %s", code, raw)
	}
}
