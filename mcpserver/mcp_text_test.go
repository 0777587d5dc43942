package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"datadesk/api/apitest"
	"datadesk/mcpserver"
)

// TestMCPTextCarriesTheAnswer: a host that passes its model only a tool's
// text content got "257 of 9958 rows match. 1 rows in the structured
// result.", no values, hints or notes. The text now holds the answer's
// rows as a table, its notes and what to ask next, within its budget.
func TestMCPTextCarriesTheAnswer(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	var b strings.Builder
	b.WriteString("region,amount,note\n")
	for i := range 200 {
		fmt.Fprintf(&b, "R%02d,%d.%02d,%s\n", i%20, i, i%100, strings.Repeat("long words ", 10))
	}
	code, up := ts.Upload(token, "sales.csv", []byte(b.String()))
	if code != 201 {
		t.Fatalf("upload: %d %v", code, up)
	}
	file := up["file"].(map[string]any)["id"].(string)
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			cs := connect(t, ts, token)
			res, structured := apitest.CallMCP(t, cs, "files_analyze_table", map[string]any{"file_id": file, "group_by": []any{"region"},
				"measures": []any{map[string]any{"op": "sum", "column": "amount"}, map[string]any{"op": "count"}}, "limit": 20})
			text := apitest.TextOf(res)
			rows := structured["rows"].([]any)
			if len(rows) != 20 {
				t.Fatalf("rows %d", len(rows))
			}
			for _, r := range rows {
				cells := r.([]any)
				line := fmt.Sprintf("%v | %.2f | %v", cells[0], cells[1], cells[2])
				if !strings.Contains(text, line) {
					t.Errorf("the text lacks the row %q:\n%s", line, text)
				}
			}
			if !strings.HasPrefix(text, "200 of 200 rows match in "+file+". 20 groups.") || !strings.Contains(text, "\nregion | sum_amount | count\n") {
				t.Errorf("the text's head: %.200s", text)
			}
			if len(text) > mcpserver.MaxText {
				t.Errorf("text of %d bytes, past %d", len(text), mcpserver.MaxText)
			}
			// One group of one row, in words a person would write.
			res, _ = apitest.CallMCP(t, cs, "files_analyze_table", map[string]any{"file_id": file, "filters": []any{map[string]any{"column": "region", "op": "eq", "value": "R03"}},
				"measures": []any{map[string]any{"op": "count"}}, "group_by": []any{"region"}})
			if text := apitest.TextOf(res); !strings.Contains(text, "10 of 200 rows match in "+file+". 1 group.") {
				t.Errorf("one group: %s", text)
			}
		})
	}
}

// TestReadOnlyHintsTrue: tools that store a table when asked to show
// their answer were marked read-only. Only files.read is.
func TestReadOnlyHintsTrue(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	cs := apitest.MCPTransports["http"](t, ts, token)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		want := tl.Name == "files_read" || tl.Name == "approvals_get"
		if got := tl.Annotations != nil && tl.Annotations.ReadOnlyHint; got != want {
			t.Errorf("%s: readOnlyHint %v, want %v", tl.Name, got, want)
		}
	}
	code, m, _ := ts.Do("GET", "/v1/tools?format=mcp", token, nil, "")
	if code != 200 {
		t.Fatal(code)
	}
	for _, x := range m["tools"].([]any) {
		tl := x.(map[string]any)
		want := tl["name"] == "files_read"
		if got := tl["annotations"].(map[string]any)["readOnlyHint"] == true; got != want {
			t.Errorf("%v in ?format=mcp: readOnlyHint %v, want %v", tl["name"], got, want)
		}
	}
}

// TestMCPErrorListsAllowedOnce: an MCP error's text printed the allowed
// values twice, once in the message and once after it.
func TestMCPErrorListsAllowedOnce(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	code, up := ts.Upload(token, "t.csv", []byte("a,b\n1,2\n"))
	if code != 201 {
		t.Fatalf("upload: %d %v", code, up)
	}
	cs := apitest.MCPTransports["http"](t, ts, token)
	res, _ := apitest.CallMCP(t, cs, "files_query_table", map[string]any{"file_id": up["file"].(map[string]any)["id"],
		"aggregates": []any{map[string]any{"op": "median", "column": "a"}}})
	text := apitest.TextOf(res)
	if !res.IsError || strings.Count(text, "count, sum, avg, min, max") != 1 {
		t.Errorf("error text %q: want the allowed ops once", text)
	}
	if !strings.Contains(text, "files.analyze_table") {
		t.Errorf("error text %q does not point to files.analyze_table", text)
	}
}
