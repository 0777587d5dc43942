package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestNotFiniteAnswers: an expression that overflows (1e308*10), or a sum,
// average or share over doubles near the top of their range, made DuckDB
// answer an infinity, which JSON has no number for: the answer was a 500
// (json: unsupported value: +Inf) over HTTP, MCP and show. Such a value is
// now the text "Infinity", "-Infinity" or "NaN", as exports write it, and a
// note names the measure.
func TestNotFiniteAnswers(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, up := ts.Upload(token, "huge.csv", []byte("k,x\na,2.5\na,3.5\nb,-1.25\nb,-4\nc,0\n"))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"an expression past the range", "files.analyze_table", map[string]any{"file_id": file,
			"measures": []any{map[string]any{"op": "count"}, map[string]any{"name": "y", "expr": "1e308*10"}}}, []string{`"Infinity"`, `y: 1 value(s) past the range`}},
		{"an average by group, scaled past the range", "files.analyze_table", map[string]any{"file_id": file, "group_by": []any{"k"},
			"measures": []any{m("avg", "x"), map[string]any{"name": "y", "expr": "avg_x*1e308*1e300"}}}, []string{`"Infinity"`, `"-Infinity"`, `y: 2 value(s)`}},
		{"0/0 of doubles", "files.analyze_table", map[string]any{"file_id": file,
			"measures": []any{map[string]any{"op": "count"}, map[string]any{"name": "z", "expr": "(1e308*10)-(1e308*10)"}}}, []string{`"NaN"`, `z: 1 value(s)`}},
		{"query_table by group", "files.query_table", map[string]any{"file_id": file, "group_by": []any{"k"},
			"aggregates": []any{map[string]any{"op": "sum", "column": "x", "name": "total"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, raw := ts.Do("POST", "/v1/tools/"+tc.tool, token, strings.NewReader(apitest.MustJSON(map[string]any{"arguments": tc.args})), "application/json")
			if code != http.StatusOK {
				t.Fatalf("got %d %s", code, raw)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("the answer lacks %s: %s", w, raw)
				}
			}
			cs := apitest.MCPTransports["http"](t, ts, token)
			res, structured := apitest.CallMCP(t, cs, strings.ReplaceAll(tc.tool, ".", "_"), tc.args)
			if res.IsError {
				t.Fatalf("over MCP: %s", apitest.TextOf(res))
			}
			for _, w := range tc.want {
				if got := apitest.MustJSON(structured); !strings.Contains(got, w) {
					t.Errorf("the MCP answer lacks %s: %s", w, got)
				}
			}
		})
	}
	// Shown as a table of its own: the infinity is stored, and its rows,
	// its schema and its exports answer.
	code, shown := ts.Call(token, "files.analyze_table", map[string]any{"file_id": file, "show": true, "group_by": []any{"k"},
		"measures": []any{m("avg", "x"), map[string]any{"name": "y", "expr": "avg_x*1e308*1e300"}}})
	if code != http.StatusOK {
		t.Fatalf("shown: %d %v", code, shown)
	}
	view := shown["result"].(map[string]any)["view"].(map[string]any)["table_id"].(string)
	for _, path := range []string{"/v1/tables/" + view + "/rows", "/v1/tables/" + view, "/v1/tables/" + view + "/export?format=json",
		"/v1/tables/" + view + "/export?format=csv", "/v1/tables/" + view + "/export?format=xlsx"} {
		code, _, raw := ts.Do("GET", path, token, nil, "")
		if code != http.StatusOK {
			t.Errorf("%s: %d %.300s", path, code, raw)
		}
		if !strings.Contains(path, "xlsx") && strings.HasSuffix(path, "rows") && !strings.Contains(string(raw), `"Infinity"`) {
			t.Errorf("%s: %.300s, want \"Infinity\"", path, raw)
		}
		if strings.Contains(path, "csv") && !strings.Contains(string(raw), "Infinity") {
			t.Errorf("%s: %.300s, want Infinity", path, raw)
		}
	}
}
