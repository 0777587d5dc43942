package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestTextColumnSaysWhy: sum over a column stored as text answered only
// that the column was text. The answer now quotes what the import found,
// so the reader knows which values to fix, and how to read the file
// again.
func TestTextColumnSaysWhy(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	file := uploadAmounts(t, ts, token)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"files.analyze_table", map[string]any{"file_id": file, "measures": []any{map[string]any{"op": "sum", "column": "amount"}}}},
		{"files.analyze_table", map[string]any{"file_id": file, "measures": []any{map[string]any{"op": "share", "column": "amount"}}}},
		{"files.query_table", map[string]any{"file_id": file, "aggregates": []any{map[string]any{"op": "avg", "column": "amount"}}}},
	} {
		code, m := ts.Call(token, tc.tool, tc.args)
		msg := apitest.MustJSON(m)
		if code != http.StatusBadRequest || !strings.Contains(msg, "the import found 1 of 3 values are not numbers") ||
			!strings.Contains(msg, "read the file again with files.analyze_table's reading argument naming its header rows") {
			t.Errorf("%s %v: got %d %s, want 400 quoting the import's reason and how to read the file again", tc.tool, tc.args["measures"], code, msg)
		}
	}
}

// uploadAmounts stores a table whose amount column is text: two numbers
// and a note.
func uploadAmounts(t *testing.T, ts *apitest.Server, token string) string {
	t.Helper()
	code, up := ts.Upload(token, "sales.csv", []byte("region,amount\nNorth,10\nSouth,12\nEast,about 7\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	return up["file"].(map[string]any)["id"].(string)
}

// TestTextComparedAsNumbers: a comparison with a number on a text column
// compared text ("about 7" is greater than 100); it now compares the
// values that are numbers and says how many were not, or is refused when
// none is a number. A min, max or sort of a column of mostly numbers,
// which text order would answer wrongly, is refused.
func TestTextComparedAsNumbers(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	file := uploadAmounts(t, ts, token)
	filter := func(column, op string, value any) []any {
		return []any{map[string]any{"column": column, "op": op, "value": value}}
	}
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		code    int
		matched float64
		says    string
	}{
		{"gt a number", "files.query_table", map[string]any{"filters": filter("amount", "gt", 11)}, http.StatusOK, 1,
			`filters[0]: \"amount\" is text, so gt compared its values that are numbers, as numbers; 1 of its 3 values is not a number (\"about 7\")`},
		{"a number quoted", "files.analyze_table", map[string]any{"filters": filter("amount", "lte", "10")}, http.StatusOK, 1,
			`lte compared its values that are numbers`},
		{"between numbers", "files.analyze_table", map[string]any{"filters": filter("amount", "between", []any{1, 100})}, http.StatusOK, 2,
			`1 of its 3 values is not a number`},
		{"a number on words", "files.query_table", map[string]any{"filters": filter("region", "gt", 5)}, http.StatusBadRequest, 0,
			`gt with a number compares numbers, and none of the 3 values of \"region\" is a number (\"East\", \"North\", \"South\")`},
		{"text on words", "files.query_table", map[string]any{"filters": filter("region", "gt", "M")}, http.StatusOK, 2, ""},
		{"max of mostly numbers", "files.analyze_table", map[string]any{"measures": []any{map[string]any{"op": "max", "column": "amount"}}},
			http.StatusBadRequest, 0, `max of \"amount\" would order text, where \"9\" comes after \"10\": \"amount\" is text, though 2 of its 3 values are numbers`},
		{"sort of mostly numbers", "files.query_table", map[string]any{"limit": 3, "sort_by": "amount", "direction": "desc"},
			http.StatusBadRequest, 0, `sort_by \"amount\" would order text`},
		{"sort by its groups", "files.analyze_table", map[string]any{"group_by": []any{"amount"}, "sort_by": "amount"},
			http.StatusBadRequest, 0, `read the file again with files.analyze_table's reading argument naming its header rows`},
		{"max of words", "files.analyze_table", map[string]any{"measures": []any{map[string]any{"op": "max", "column": "region"}}},
			http.StatusOK, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["file_id"] = file
			code, m := ts.Call(token, tc.tool, tc.args)
			msg := apitest.MustJSON(m)
			if code != tc.code || !strings.Contains(msg, tc.says) {
				t.Fatalf("got %d %s, want %d saying %s", code, msg, tc.code, tc.says)
			}
			if code == http.StatusOK {
				res := m["result"].(map[string]any)
				if res["matched_row_count"] != tc.matched {
					t.Errorf("matched %v, want %v: %s", res["matched_row_count"], tc.matched, msg)
				}
			}
		})
	}
}

// TestMCPTextComparedAsNumbers: over the MCP SDK's client, reading only
// the text content, a comparison with a number on a text column says how
// many values were not numbers, and one on a column without numbers is
// refused saying so.
func TestMCPTextComparedAsNumbers(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	file := uploadAmounts(t, ts, token)
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			cs := connect(t, ts, token)
			res, _ := apitest.CallMCP(t, cs, "files_query_table", map[string]any{"file_id": file, "limit": 5,
				"filters": []any{map[string]any{"column": "amount", "op": "gt", "value": 11}}})
			if text := apitest.TextOf(res); res.IsError || !strings.Contains(text, "South | 12") ||
				!strings.Contains(text, `1 of its 3 values is not a number ("about 7")`) {
				t.Errorf("gt 11 on amount: %s", text)
			}
			res, _ = apitest.CallMCP(t, cs, "files_analyze_table", map[string]any{"file_id": file,
				"filters": []any{map[string]any{"column": "region", "op": "lt", "value": 5}}})
			if text := apitest.TextOf(res); !res.IsError || !strings.Contains(text, "none of the 3 values of") {
				t.Errorf("lt 5 on region: error %v, %s", res.IsError, text)
			}
		})
	}
}
