package rest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"datadesk/api/apitest"
)

// Answer-size targets: what a model pays in tokens on every call.
const (
	maxCountAnswer      = 700
	maxAggregatesAnswer = 800
	maxGroupsAnswer     = 2000
	maxReadAllAnswer    = 6000
)

// uploadSP500 stores the 14-column S&P 500 financials file.
func uploadSP500(t *testing.T, ts *apitest.Server, token string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "sp500-financials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	code, m := ts.Upload(token, "sp500-financials.csv", raw)
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	return m["file"].(map[string]any)["id"].(string)
}

// TestAnswerSizes measures whole HTTP answers against the targets.
func TestAnswerSizes(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 4 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	id := uploadSP500(t, ts, token)
	filter := []any{map[string]any{"column": "sector", "op": "eq", "value": "semiconductors"}}
	tests := []struct {
		name string
		tool string
		args map[string]any
		max  int
	}{
		{"count with one filter", "files.query_table", map[string]any{"file_id": id, "filters": filter}, maxCountAnswer},
		{"aggregates with one filter", "files.query_table", map[string]any{"file_id": id, "filters": filter,
			"aggregates": []any{map[string]any{"op": "sum", "column": "market_cap"}, map[string]any{"op": "avg", "column": "price"}}}, maxAggregatesAnswer},
		{"20 groups", "files.query_table", map[string]any{"file_id": id, "group_by": []any{"symbol"}, "limit": 20,
			"aggregates": []any{map[string]any{"op": "sum", "column": "market_cap"}}}, maxGroupsAnswer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m, raw := ts.DoJSON("POST", "/v1/tools/"+tc.tool, token, map[string]any{"arguments": tc.args})
			if code != http.StatusOK {
				t.Fatalf("got %d %s", code, raw)
			}
			t.Logf("%d bytes: %s", len(raw), raw)
			if len(raw) > tc.max {
				t.Errorf("answer is %d bytes, want at most %d", len(raw), tc.max)
			}
			res := m["result"].(map[string]any)
			if _, grouped := tc.args["group_by"]; !grouped {
				if _, ok := res["has_more"]; ok {
					t.Errorf("a count answer speaks of more rows: %s", raw)
				}
			} else if res["has_more"] != true || len(res["rows"].([]any)) != 20 {
				t.Errorf("want 20 groups and has_more: %s", raw)
			}
		})
	}
	t.Run("files.read of 20 files", func(t *testing.T) {
		for i := range 20 {
			body := fmt.Sprintf("order_id,region,amount\n%05d,North,1.5\n", i)
			if code, m := ts.Upload(token, fmt.Sprintf("orders-%02d.csv", i), []byte(body)); code != http.StatusCreated {
				t.Fatalf("upload: %d %v", code, m)
			}
		}
		code, m, raw := ts.DoJSON("POST", "/v1/tools/files.read", token, map[string]any{"arguments": map[string]any{"limit": 20}})
		if code != http.StatusOK {
			t.Fatalf("got %d %s", code, raw)
		}
		if n := len(m["result"].(map[string]any)["files"].([]any)); n != 20 {
			t.Fatalf("got %d files, want 20", n)
		}
		t.Logf("%d bytes: %.700s", len(raw), raw)
		if len(raw) >= maxReadAllAnswer {
			t.Errorf("answer is %d bytes, want under %d", len(raw), maxReadAllAnswer)
		}
	})
}
