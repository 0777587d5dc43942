package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestStoredResultsFindable: tables stored by analyses were listed
// nowhere, each named "<table> (query)" with nothing saying what made it.
// files.read and the files page now list them, newest first, with their
// source and what made them in words.
func TestStoredResultsFindable(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, up := ts.Upload(token, "orders.csv", []byte(apitest.OrdersCSV))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)["id"].(string)
	for _, args := range []map[string]any{
		{"file_id": file, "show": true, "group_by": []any{"region"}, "measures": []any{map[string]any{"op": "sum", "column": "amount", "name": "total"}}, "sort_by": "total", "direction": "desc"},
		{"file_id": file, "show": true, "filters": []any{map[string]any{"column": "region", "op": "eq", "value": "north"}}, "group_by": []any{map[string]any{"column": "day", "bucket": "month"}}, "measures": []any{map[string]any{"op": "count"}}},
	} {
		if code, m := ts.Call(token, "files.analyze_table", args); code != http.StatusOK {
			t.Fatalf("analysis: %d %v", code, m)
		}
	}
	code, m := ts.Call(token, "files.read", map[string]any{"session_only": false})
	if code != http.StatusOK {
		t.Fatalf("files.read: %d %v", code, m)
	}
	results, _ := m["result"].(map[string]any)["stored_results"].([]any)
	if len(results) != 2 {
		t.Fatalf("stored results %v", results)
	}
	newest, older := results[0].(map[string]any), results[1].(map[string]any)
	if got := newest["made_by"]; got != "filters: region eq north; groups: month of day; measures: count" {
		t.Errorf("newest made by %q", got)
	}
	if got := older["made_by"]; got != "groups: region; measures: total = sum of amount; sorted by total, descending" {
		t.Errorf("older made by %q", got)
	}
	if newest["source"] != "orders" || newest["row_count"] == nil {
		t.Errorf("newest %v", newest)
	}
	cs := apitest.MCPTransports["http"](t, ts, token)
	res, _ := apitest.CallMCP(t, cs, "files_read", map[string]any{"session_only": false})
	if text := apitest.TextOf(res); !strings.Contains(text, "Stored results, newest first (2):") || !strings.Contains(text, "groups: region; measures: total = sum of amount") {
		t.Errorf("files_read's text: %s", text)
	}
	client, _ := ts.PageSignIn(users, "ana")
	resp, err := client.Get(ts.URL + "/files")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if page := b.String(); !strings.Contains(page, "Stored results") || !strings.Contains(page, "filters: region eq north; groups: month of day") {
		t.Errorf("the files page does not list the stored results")
	}
}
