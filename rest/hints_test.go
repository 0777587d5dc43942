package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"datadesk/api/apitest"
)

// TestAnswersAModelCanActOn: a query that matched nothing says how the
// filter missed, a filename given as file_id points to files.read, and a
// wrong body names the key and the shape it takes, never a decoder's words.
func TestAnswersAModelCanActOn(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	csv := "order_id,region,city\n00012345,North,New York\n00012346,South,Los Angeles\n"
	code, m := ts.Upload(token, "orders.csv", []byte(csv))
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %v", code, m)
	}
	id := m["file"].(map[string]any)["id"].(string)
	f := func(col, op string, v any) map[string]any {
		return map[string]any{"file_id": id, "filters": []any{map[string]any{"column": col, "op": op, "value": v}}}
	}
	hints := []struct {
		name    string
		args    map[string]any
		matched float64
		want    string // in the hint; "" for none
	}{
		{"number against text ids", f("order_id", "eq", 12345), 0, `order_id is text; 12345 matched nothing, but "00012345" equals it as a number`},
		{"number with no near id", f("order_id", "eq", 999), 0, `order_id is text; values look like "00012345"`},
		{"numbers in a list", f("order_id", "in", []any{777, 12346}), 0, `"00012346"`},
		{"text off by spaces", f("city", "eq", "newyork"), 0, `no city equals "newyork"; near values (ignoring case and spaces): "New York"`},
		{"text with nothing near", f("city", "eq", "Paris"), 0, ""},
		{"a match needs no hint", f("order_id", "eq", "00012345"), 1, ""},
	}
	for _, tc := range hints {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.Call(token, "files.query_table", tc.args)
			if code != http.StatusOK {
				t.Fatalf("got %d %v", code, m)
			}
			res := m["result"].(map[string]any)
			hint, _ := res["hint"].(string)
			if res["matched_row_count"] != tc.matched || (tc.want == "") != (hint == "") || !strings.Contains(hint, tc.want) {
				t.Errorf("got matched %v, hint %q; want %v, %q", res["matched_row_count"], hint, tc.matched, tc.want)
			}
		})
	}

	t.Run("filename as file_id", func(t *testing.T) {
		calls := []struct {
			tool  string
			args  map[string]any
			field string
		}{
			{"files.query_table", map[string]any{"file_id": "orders.csv"}, "file_id"},
			{"files.read", map[string]any{"file_id": "Orders.CSV"}, "file_id"},
			{"files.create", map[string]any{"filename": "copy.xlsx", "source_file_id": "orders.csv"}, "source_file_id"},
			{"files.create", map[string]any{"filename": "all.zip", "file_ids": []any{"orders.csv"}}, "file_ids[0]"},
		}
		for _, c := range calls {
			code, m := ts.Call(token, c.tool, c.args)
			msg := apitest.MustJSON(m)
			if code != http.StatusNotFound || !strings.Contains(msg, "call files.read") || !strings.Contains(msg, id) ||
				m["error"].(map[string]any)["field"] != c.field {
				t.Errorf("%s: got %d %s", c.tool, code, msg)
			}
		}
		if code, m := ts.Call(token, "files.read", map[string]any{"file_id": "nothing.csv"}); code != http.StatusNotFound ||
			!strings.Contains(apitest.MustJSON(m), "call files.read") {
			t.Errorf("unknown filename: got %d %v", code, m)
		}
	})

	bodies := []struct {
		name, method, path, body string
		want                     []string // in the message
	}{
		{"labels notes as text", "PUT", "/v1/tables/" + id + "/labels", `{"notes": "x"}`, []string{"notes must be a list of texts, not text"}},
		{"labels unknown key", "PUT", "/v1/tables/" + id + "/labels", `{"note": ["x"]}`, []string{`unknown key "note"`, "title, caption, columns, notes"}},
		{"labels column label as number", "PUT", "/v1/tables/" + id + "/labels", `{"columns": {"city": 1}}`, []string{"each item of columns must be text, not a number"}},
		{"labels broken JSON", "PUT", "/v1/tables/" + id + "/labels", `{"title": `, []string{"the body is"}},
		{"table rows as text", "POST", "/v1/tables", `{"provider": "p", "rows": "x"}`, []string{"rows must be a list"}},
		{"sign-in name as number", "POST", "/v1/session", `{"name": 1, "password": "x"}`, []string{"name must be text, not a number"}},
		{"tool arguments as a list", "POST", "/v1/tools/files.read", `{"arguments": [1]}`, []string{"arguments must be a JSON object"}},
		{"tool body broken", "POST", "/v1/tools/files.read", `{"arguments": `, []string{`{"arguments": {...}}`}},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			code, m, raw := ts.Do(tc.method, tc.path, token, strings.NewReader(tc.body), "application/json")
			if code != http.StatusBadRequest || apitest.ErrCode(m) != "invalid" {
				t.Fatalf("got %d %s, want 400 invalid", code, raw)
			}
			msg := m["error"].(map[string]any)["message"].(string)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, leak := range []string{"json:", "unmarshal", "Go ", "[]string", "struct", "map["} {
				if strings.Contains(msg, leak) {
					t.Errorf("message %q has a decoder's %q", msg, leak)
				}
			}
		})
	}
}
