package rest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"datadesk/api/apitest"
)

// TestSP500DividendYield uploads the S&P 500 file, where one dividend yield
// is written 3.6e-05: the column must be numeric, so that gt 0.03 compares
// numbers (102 companies, not the 103 a text comparison finds), max is the
// largest yield and avg works.
func TestSP500DividendYield(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "sp500-financials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	ts := apitest.New(t, apitest.Options{MaxUpload: 8 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, m := ts.Upload(token, "sp500-financials.csv", data)
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
	code, res := ts.Call(token, "files.query_table", map[string]any{"file_id": fileID,
		"filters":    []any{map[string]any{"column": "dividend_yield", "op": "gt", "value": 0.03}},
		"aggregates": []any{map[string]any{"op": "max", "column": "dividend_yield"}, map[string]any{"op": "avg", "column": "dividend_yield"}}})
	if code != http.StatusOK {
		t.Fatalf("query: %d %v", code, res)
	}
	r := res["result"].(map[string]any)
	if got := r["matched_row_count"]; got != json.Number("102") && got != float64(102) {
		t.Errorf("gt 0.03: got %v, want 102", got)
	}
	code, res = ts.Call(token, "files.query_table", map[string]any{"file_id": fileID,
		"aggregates": []any{map[string]any{"op": "min", "column": "dividend_yield"}}})
	if code != http.StatusOK {
		t.Fatalf("query: %d %v", code, res)
	}
	agg := res["result"].(map[string]any)["aggregates"].(map[string]any)
	// EA's 3.6e-05 is the smallest yield, read exactly.
	if got := apitest.MustJSON(agg["min_dividend_yield"]); got != "0.000036" {
		t.Errorf("min: got %s, want 0.000036", got)
	}
}

// TestEngineNamesAsColumns uploads a CSV whose columns are called rowid and
// __row, holding text and numbers against file order: browsing and
// files.query_table answer 200 in file order, and the labels keep the names.
func TestEngineNamesAsColumns(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, m := ts.Upload(token, "names.csv", []byte("rowid,__row,ROWID,name\nz,3,c,first\ny,2,b,second\nx,1,a,third\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	tid := m["file"].(map[string]any)["table_id"].(string)
	var keys, labels []string
	for _, c := range m["tables"].([]any)[0].(map[string]any)["columns"].([]any) {
		keys = append(keys, c.(map[string]any)["key"].(string))
		labels = append(labels, c.(map[string]any)["label"].(string))
	}
	if got := apitest.MustJSON(labels); got != `["rowid","__row","ROWID","name"]` {
		t.Errorf("labels: %s", got)
	}
	code, raw := ts.Get(token, "/v1/tables/"+tid+"/rows?offset=1&limit=2")
	var page struct{ Rows [][]any }
	if err := json.Unmarshal(raw, &page); code != 200 || err != nil || apitest.MustJSON(page.Rows) != `[["y",2,"b","second"],["x",1,"a","third"]]` {
		t.Errorf("rows: %d %s", code, raw)
	}
	for _, args := range []map[string]any{
		{"file_id": tid, "limit": 2, "offset": 1},
		{"file_id": tid, "limit": 2, "offset": 1, "filters": []any{map[string]any{"column": keys[1], "op": "gte", "value": 1}}},
		{"file_id": tid, "limit": 3, "sort_by": keys[0]},
		{"file_id": tid, "group_by": []any{keys[2]}, "aggregates": []any{map[string]any{"op": "sum", "column": keys[1], "name": "rowid"}}, "show": true},
	} {
		code, res := ts.Call(token, "files.query_table", args)
		if code != 200 {
			t.Errorf("%v: %d %v", args, code, res)
			continue
		}
		rows := apitest.MustJSON(res["result"].(map[string]any)["rows"])
		switch {
		case args["offset"] != nil && rows != `[["y",2,"b","second"],["x",1,"a","third"]]`:
			t.Errorf("%v: rows %s", args, rows)
		case args["sort_by"] != nil && rows != `[["x",1,"a","third"],["y",2,"b","second"],["z",3,"c","first"]]`:
			t.Errorf("%v: rows %s", args, rows)
		}
	}
}
