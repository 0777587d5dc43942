package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"datadesk/api/apitest"
	"datadesk/internal/testenv"
)

// openpyxlRows counts the rows of each sheet openpyxl's read-only mode
// reads, with the interpreter that has openpyxl; ok is false when there
// is none (make test installs Debian's python3-openpyxl).
func openpyxlRows(t *testing.T, xlsx []byte) (map[string]int, bool) {
	t.Helper()
	python := openpyxlPython()
	if python == "" {
		return nil, false
	}
	path := filepath.Join(t.TempDir(), "export.xlsx")
	if err := os.WriteFile(path, xlsx, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "../exports/testdata/read_xlsx.py", path).Output()
	if err != nil {
		t.Fatalf("openpyxl: %v", err)
	}
	var sheets map[string]struct{ Rows [][]any }
	if err := json.Unmarshal(out, &sheets); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for name, s := range sheets {
		counts[name] = len(s.Rows)
	}
	return counts, true
}

// TestExportsReadWholeByOpenpyxl: a 503-row table exported whole, and a
// filtered view of it exported from the page, come back whole through
// openpyxl's read-only mode, which reads only the declared range.
func TestExportsReadWholeByOpenpyxl(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	ana := apitest.AddUser(t, users, "ana", "analyst")
	if err := users.SetPassword("ana", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	in.WriteString("id,region,amount\n")
	north := 0
	for i := 0; i < 503; i++ {
		region := []string{"North", "South", "East"}[i%3]
		if region == "North" {
			north++
		}
		fmt.Fprintf(&in, "%05d,%s,%d.50\n", i, region, i)
	}
	_, m := ts.Upload(ana, "orders.csv", []byte(in.String()))
	tid := m["file"].(map[string]any)["table_id"].(string)
	client, _, _ := ts.SignIn("ana", "correct horse battery")
	get := func(path string) (int, []byte) {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	for _, tc := range []struct {
		name, path string
		rows       int
	}{
		{"whole table", "/v1/tables/" + tid + "/export?format=xlsx", 503},
		{"filtered view", "/tables/" + tid + "/export?format=xlsx&o.region=eq&f.region=north&sort=amount&dir=desc", north},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(tc.path)
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			x, err := excelize.OpenReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			sheet := x.GetSheetList()[0]
			if dim, _ := x.GetSheetDimension(sheet); dim != fmt.Sprintf("A1:C%d", tc.rows+1) {
				t.Errorf("dimension %s, want A1:C%d", dim, tc.rows+1)
			}
			rows, _ := x.GetRows(sheet)
			if len(rows) != tc.rows+1 {
				t.Errorf("excelize reads %d rows, want %d", len(rows)-1, tc.rows)
			}
			counts, ok := openpyxlRows(t, body)
			if !ok {
				testenv.Missing(t, "no python3 with openpyxl")
			}
			if counts[sheet] != tc.rows+1 {
				t.Errorf("openpyxl read-only reads %d rows, want %d", counts[sheet]-1, tc.rows)
			}
		})
	}
	if code, _ := get("/tables/" + tid + "/export?format=pdf"); code != http.StatusBadRequest {
		t.Errorf("pdf export of a view: %d, want 400", code)
	}
	code, body := get("/tables/" + tid + "?o.amount=gte&f.amount=lots&f.region=North")
	if code != http.StatusBadRequest || !strings.Contains(string(body), `id="filter-error"`) || !strings.Contains(string(body), `value="lots"`) {
		t.Errorf("mistyped filter: %d", code)
	}
}

// openpyxlPython is a python3 with openpyxl, or "".
func openpyxlPython() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import openpyxl").Run() == nil {
			return path
		}
	}
	return ""
}
