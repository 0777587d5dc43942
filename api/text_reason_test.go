package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestTextColumnSaysWhy: sum over a column stored as text answered only
// that the column was text. The answer now quotes what the import found,
// so the reader knows which values to fix.
func TestTextColumnSaysWhy(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	token := addUser(t, users, "ana", "analyst")
	code, up := ts.upload(token, "sales.csv", []byte("region,amount\nNorth,10\nSouth,12\nEast,about 7\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"files.analyze_table", map[string]any{"file_id": file, "measures": []any{map[string]any{"op": "sum", "column": "amount"}}}},
		{"files.analyze_table", map[string]any{"file_id": file, "measures": []any{map[string]any{"op": "share", "column": "amount"}}}},
		{"files.query_table", map[string]any{"file_id": file, "aggregates": []any{map[string]any{"op": "avg", "column": "amount"}}}},
	} {
		code, m := ts.call(token, tc.tool, tc.args)
		msg := mustJSON(m)
		if code != http.StatusBadRequest || !strings.Contains(msg, "the import found 1 of 3 values are not numbers") {
			t.Errorf("%s %v: got %d %s, want 400 quoting the import's reason", tc.tool, tc.args["measures"], code, msg)
		}
	}
	// A max or a sort over such a column says it compared text.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"files.analyze_table", map[string]any{"file_id": file, "measures": []any{map[string]any{"op": "max", "column": "amount"}}}},
		{"files.analyze_table", map[string]any{"file_id": file, "group_by": []any{"amount"}, "measures": []any{map[string]any{"op": "count"}}, "sort_by": "amount"}},
		{"files.query_table", map[string]any{"file_id": file, "limit": 3, "sort_by": "amount", "direction": "desc"}},
	} {
		code, m := ts.call(token, tc.tool, tc.args)
		msg := mustJSON(m)
		if code != http.StatusOK || !strings.Contains(msg, `compared its values as text, not as numbers`) {
			t.Errorf("%s %v: got %d %s, want a note that text was compared", tc.tool, tc.args, code, msg)
		}
	}
}

// TestQueryTablePointsToAnalyze: query_table's refusals for what it does
// not take (a date's max, a distinct count, a prefix filter) did not say
// that files.analyze_table takes them.
func TestQueryTablePointsToAnalyze(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	token := addUser(t, users, "ana", "analyst")
	code, up := ts.upload(token, "days.csv", []byte("id,day,amount\n1,2024-01-02,3\n2,2024-02-03,4\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)["id"].(string)
	for _, args := range []map[string]any{
		{"file_id": file, "aggregates": []any{map[string]any{"op": "max", "column": "day"}}},
		{"file_id": file, "aggregates": []any{map[string]any{"op": "count_distinct", "column": "day"}}},
		{"file_id": file, "filters": []any{map[string]any{"column": "day", "op": "starts_with", "value": "2024"}}},
	} {
		code, m := ts.call(token, "files.query_table", args)
		if msg := mustJSON(m); code != http.StatusBadRequest || !strings.Contains(msg, "files.analyze_table") {
			t.Errorf("%v: got %d %s, want a 400 naming files.analyze_table", args, code, msg)
		}
	}
}
