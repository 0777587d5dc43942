package api

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestSP500DividendYield uploads the S&P 500 file, where one dividend yield
// is written 3.6e-05: the column must be numeric, so that gt 0.03 compares
// numbers (102 companies, not the 103 a text comparison finds), max is the
// largest yield and avg works.
func TestSP500DividendYield(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sp500-financials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	ts, users := newServer(t, 8<<20)
	token := addUser(t, users, "ana", "analyst")
	code, m := ts.upload(token, "sp500-financials.csv", data)
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	fileID := m["file"].(map[string]any)["id"].(string)
	for _, c := range m["tables"].([]any)[0].(map[string]any)["columns"].([]any) {
		col := c.(map[string]any)
		if col["key"] == "dividend_yield" && col["type"] != "decimal" {
			t.Fatalf("dividend_yield: got %v (%v), want decimal", col["type"], col["reason"])
		}
	}
	code, res := ts.call(token, "files.query_table", map[string]any{"file_id": fileID,
		"filters":    []any{map[string]any{"column": "dividend_yield", "op": "gt", "value": 0.03}},
		"aggregates": []any{map[string]any{"op": "max", "column": "dividend_yield"}, map[string]any{"op": "avg", "column": "dividend_yield"}}})
	if code != http.StatusOK {
		t.Fatalf("query: %d %v", code, res)
	}
	r := res["result"].(map[string]any)
	if got := r["matched_row_count"]; got != json.Number("102") && got != float64(102) {
		t.Errorf("gt 0.03: got %v, want 102", got)
	}
	code, res = ts.call(token, "files.query_table", map[string]any{"file_id": fileID,
		"aggregates": []any{map[string]any{"op": "min", "column": "dividend_yield"}}})
	if code != http.StatusOK {
		t.Fatalf("query: %d %v", code, res)
	}
	agg := res["result"].(map[string]any)["aggregates"].(map[string]any)
	// EA's 3.6e-05 is the smallest yield, read exactly.
	if got := mustJSON(agg["min_dividend_yield"]); got != "0.000036" {
		t.Errorf("min: got %s, want 0.000036", got)
	}
}
