package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"datadesk/api"
	"datadesk/api/apitest"
)

const ordersCSV = "order_id,region,amount,day\n000123,North,10.50,2024-01-02\n123,north,5,2024-01-03\n000124,SOUTH,7.25,2024-02-01\n000125,East,,2024-02-02\n"

func TestQueryTableAnswers(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	tests := []struct {
		name string
		args map[string]any
		want map[string]any // top-level fields of the result, compared as JSON
	}{
		{"count all", map[string]any{"file_id": fileID}, map[string]any{"source_row_count": 4, "matched_row_count": 4}},
		{"case-insensitive eq", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "region", "op": "eq", "value": "NORTH"}}},
			map[string]any{"matched_row_count": 2}},
		{"identifier number matches its text only", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "order_id", "op": "eq", "value": 123}}},
			map[string]any{"matched_row_count": 1}},
		{"identifier text with zeros", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "order_id", "op": "in", "value": []any{"000123", "000124"}}}},
			map[string]any{"matched_row_count": 2}},
		{"contains on a number's text", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "amount", "op": "contains", "value": ".25"}}},
			map[string]any{"matched_row_count": 1}},
		{"numbers as numbers", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "amount", "op": "gt", "value": "6"}}},
			map[string]any{"matched_row_count": 2}},
		{"dates as dates", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "day", "op": "gte", "value": "2024-02-01"}}},
			map[string]any{"matched_row_count": 2}},
		{"is_null", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "amount", "op": "is_null", "value": true}}},
			map[string]any{"matched_row_count": 1}},
		{"aggregates", map[string]any{"file_id": fileID, "aggregates": []any{map[string]any{"op": "sum", "column": "amount"}, map[string]any{"op": "count", "column": "amount", "name": "priced"}}},
			map[string]any{"aggregates": map[string]any{"sum_amount": 22.75, "priced": 3}}},
		{"rows with identifiers as text", map[string]any{"file_id": fileID, "columns": []any{"order_id", "amount"}, "sort_by": "amount", "direction": "desc", "limit": 2},
			map[string]any{"rows": []any{[]any{"000123", 10.5}, []any{"000124", 7.25}}, "has_more": true}},
		{"grouped", map[string]any{"file_id": fileID, "group_by": []any{"region"}, "sort_by": "region"},
			map[string]any{"group_count": 4, "columns": []any{"region", "count"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.Call(token, "files.query_table", tc.args)
			if code != 200 {
				t.Fatalf("got %d %v", code, m)
			}
			res := m["result"].(map[string]any)
			for k, w := range tc.want {
				if g := apitest.MustJSON(res[k]); g != apitest.MustJSON(w) {
					t.Errorf("%s: got %s, want %s", k, g, apitest.MustJSON(w))
				}
			}
			// The SQL goes to the log; the model does not need it.
			if _, ok := res["sql"]; ok {
				t.Errorf("sql in the answer: %v", res)
			}
		})
	}
}

// TestToolErrors walks every 400 path: each answer names the argument.
func TestToolErrors(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	f := func(col, op string, v any) map[string]any { return map[string]any{"column": col, "op": op, "value": v} }
	tests := []struct {
		name  string
		args  any
		field string
		says  string
	}{
		{"missing file_id", map[string]any{}, "file_id", "is required"},
		{"unknown argument", map[string]any{"file_id": fileID, "where": "x"}, "where", "allowed: aggregates, columns"},
		{"limit too big", map[string]any{"file_id": fileID, "limit": 21}, "limit", "at most 20"},
		{"negative offset", map[string]any{"file_id": fileID, "offset": -1}, "offset", "at least 0"},
		{"offset past bound", map[string]any{"file_id": fileID, "offset": 100001}, "offset", "at most 100000"},
		{"limit not integer", map[string]any{"file_id": fileID, "limit": 1.5}, "limit", "must be integer"},
		{"show not boolean", map[string]any{"file_id": fileID, "show": "yes"}, "show", "must be boolean"},
		{"bad op", map[string]any{"file_id": fileID, "filters": []any{f("region", "like", "x")}}, "filters[0].op", "allowed: eq, ne"},
		{"filter lacks value", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "region", "op": "eq"}}}, "filters[0].value", "is required"},
		{"filter extra key", map[string]any{"file_id": fileID, "filters": []any{map[string]any{"column": "region", "op": "eq", "value": 1, "x": 1}}}, "filters[0].x", "not a known argument"},
		{"too many group_by", map[string]any{"file_id": fileID, "group_by": []any{"a", "b", "c", "d"}}, "group_by", "at most 3"},
		{"in over 100", map[string]any{"file_id": fileID, "filters": []any{f("region", "in", make([]any, 101))}}, "filters[0].value", "at most 100"},
		{"unknown column", map[string]any{"file_id": fileID, "filters": []any{f("regio", "eq", "x")}}, "filters[0].column", "valid keys: order_id, region, amount, day"},
		{"unknown group column", map[string]any{"file_id": fileID, "group_by": []any{"nope"}}, "group_by[0]", "unknown column"},
		{"sum of text", map[string]any{"file_id": fileID, "aggregates": []any{map[string]any{"op": "sum", "column": "region"}}}, "aggregates[0].column", `"region" is text`},
		{"sum without column", map[string]any{"file_id": fileID, "aggregates": []any{map[string]any{"op": "avg"}}}, "aggregates[0].column", "needs a column"},
		{"duplicate names", map[string]any{"file_id": fileID, "aggregates": []any{map[string]any{"op": "count"}, map[string]any{"op": "count"}}}, "aggregates[1].name", "already used"},
		{"name clashes with group", map[string]any{"file_id": fileID, "group_by": []any{"region"}, "aggregates": []any{map[string]any{"op": "count", "name": "Region"}}}, "aggregates[0].name", "already used"},
		{"number unreadable", map[string]any{"file_id": fileID, "filters": []any{f("amount", "gt", "ten")}}, "filters[0].value", `cannot be read as decimal for column "amount"`},
		{"date unreadable", map[string]any{"file_id": fileID, "filters": []any{f("day", "lt", "yesterday")}}, "filters[0].value", "cannot be read as a date"},
		{"is_null not boolean", map[string]any{"file_id": fileID, "filters": []any{f("day", "is_null", "yes")}}, "filters[0].value", "true or false"},
		{"in not array", map[string]any{"file_id": fileID, "filters": []any{f("region", "in", "North")}}, "filters[0].value", "array"},
		{"eq with array", map[string]any{"file_id": fileID, "filters": []any{f("region", "eq", []any{"North"})}}, "filters[0].value", "only in takes an array"},
		{"eq with null", map[string]any{"file_id": fileID, "filters": []any{f("region", "eq", nil)}}, "filters[0].value", "is_null"},
		{"value object", map[string]any{"file_id": fileID, "filters": []any{f("region", "eq", map[string]any{})}}, "filters[0].value", "allowed"},
		{"sort by unknown", map[string]any{"file_id": fileID, "sort_by": "nope"}, "sort_by", "unknown column"},
		{"sort by non-group", map[string]any{"file_id": fileID, "group_by": []any{"region"}, "sort_by": "amount"}, "sort_by", "neither a group_by column nor an aggregate"},
		{"bad direction", map[string]any{"file_id": fileID, "direction": "up"}, "direction", "allowed: asc, desc"},
		{"columns with group_by", map[string]any{"file_id": fileID, "group_by": []any{"region"}, "columns": []any{"amount"}}, "columns", "with group_by"},
		{"arguments not object", []any{1}, "arguments", "must be"},
	}
	var scenarios []apitest.Scenario
	for _, tc := range tests {
		scenarios = append(scenarios, apitest.Scenario{Name: tc.name, Method: "POST", URL: "/v1/tools/files.query_table", Token: token,
			Body: apitest.MustJSON(map[string]any{"arguments": tc.args}), ExpectedStatus: http.StatusBadRequest, ExpectedCode: "invalid",
			ExpectedField: tc.field, ExpectedMessage: tc.says})
	}
	apitest.Run(t, ts, scenarios)
	code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": "f_aaaaaaaaaaaaaaaaaaaaaaaaaa"})
	if code != http.StatusNotFound {
		t.Errorf("missing file: got %d %v", code, m)
	}
	code, m = ts.Call(token, "files.nope", map[string]any{})
	if code != http.StatusNotFound || !strings.Contains(apitest.MustJSON(m), "files.query_table") {
		t.Errorf("unknown tool: got %d %v", code, m)
	}
	code, m, _ = ts.Do("POST", "/v1/tools/files.read", token, strings.NewReader(`{"args": {}}`), "application/json")
	if code != 400 || !strings.Contains(apitest.MustJSON(m), "arguments") {
		t.Errorf("wrong envelope: got %d %v", code, m)
	}
}

func TestQueryTableShow(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	// The unfiltered original is shown as it is: nothing new.
	code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": fileID, "show": true})
	view := m["result"].(map[string]any)["view"].(map[string]any)
	if code != 200 || view["derived"] != false || view["file_id"] != fileID {
		t.Fatalf("original: got %d %v", code, m)
	}
	// A zero-row result returns counts and creates nothing.
	code, m = ts.Call(token, "files.query_table", map[string]any{"file_id": fileID, "show": true,
		"filters": []any{map[string]any{"column": "region", "op": "eq", "value": "Mars"}}})
	res := m["result"].(map[string]any)
	if code != 200 || res["matched_row_count"] != 0.0 || res["view"] != nil {
		t.Fatalf("zero rows: got %d %v", code, m)
	}
	// A grouped result becomes a new table with its own id and provenance.
	code, m = ts.Call(token, "files.query_table", map[string]any{"file_id": fileID, "show": true, "group_by": []any{"region"},
		"aggregates": []any{map[string]any{"op": "sum", "column": "amount", "name": "total"}}})
	view = m["result"].(map[string]any)["view"].(map[string]any)
	if code != 200 || view["derived"] != true || view["row_count"] != 4.0 {
		t.Fatalf("grouped: got %d %v", code, m)
	}
	vid := view["table_id"].(string)
	code, m, _ = ts.Do("GET", "/v1/tables/"+vid, token, nil, "")
	table := m["table"].(map[string]any)
	if code != 200 || table["source_table_id"] == "" || !strings.Contains(apitest.MustJSON(table["query"]), "group_by") {
		t.Errorf("view schema: got %d %v", code, m)
	}
	// The view is a table like any other.
	code, m = ts.Call(token, "files.query_table", map[string]any{"file_id": vid, "aggregates": []any{map[string]any{"op": "sum", "column": "total"}}})
	if code != 200 || apitest.MustJSON(m["result"].(map[string]any)["aggregates"]) != `{"sum_total":22.75}` {
		t.Errorf("query the view: got %d %v", code, m)
	}
}

// TestShowNeedsCreate: showing a derived view needs files.create, showing the
// original only files.read.
func TestShowNeedsCreate(t *testing.T) {
	t.Parallel()
	readOnly := "p, role:analyst, files.upload, true, allow, allow\np, role:analyst, files.read, true, allow, allow\np, role:analyst, files.query_table, true, allow, allow"
	ts := apitest.New(t, apitest.Options{Policy: readOnly})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	_, m := ts.Upload(token, "o.csv", []byte(apitest.OrdersCSV))
	id := m["file"].(map[string]any)["id"].(string)
	if code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": id, "show": true}); code != 200 {
		t.Errorf("show original: got %d %v", code, m)
	}
	code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": id, "show": true, "group_by": []any{"region"}})
	if code != http.StatusForbidden || !strings.Contains(apitest.MustJSON(m), "files.create") {
		t.Errorf("show derived: got %d %v, want 403 naming files.create", code, m)
	}
}

func TestQueryTimeout(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 1 << 20, QueryTimeout: time.Nanosecond}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	ts.Upload(token, "o.csv", []byte(apitest.OrdersCSV))
	_, m, _ := ts.Do("GET", "/v1/files", token, nil, "")
	id := m["files"].([]any)[0].(map[string]any)["id"].(string)
	code, m := ts.Call(token, "files.query_table", map[string]any{"file_id": id})
	if code != http.StatusGatewayTimeout || apitest.ErrCode(m) != "timeout" {
		t.Fatalf("got %d %v, want 504 timeout", code, m)
	}
	// The store stays usable.
	if code, _, _ := ts.Do("GET", "/v1/files/"+id, token, nil, ""); code != 200 {
		t.Errorf("after timeout: got %d", code)
	}
}

func TestFilesReadTool(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	code, m := ts.Call(token, "files.read", map[string]any{"file_id": fileID})
	file := m["result"].(map[string]any)["file"].(map[string]any)
	if code != 200 || file["preview"].(map[string]any)["type"] != "table" {
		t.Fatalf("got %d %v", code, m)
	}
	code, m = ts.Call(token, "files.read", map[string]any{})
	if code != 200 || len(m["result"].(map[string]any)["files"].([]any)) != 1 {
		t.Fatalf("list: got %d %v", code, m)
	}
	code, m = ts.Call(token, "files.read", map[string]any{"limit": 0})
	if code != 400 || apitest.ErrCode(m) != "invalid" {
		t.Errorf("limit 0: got %d %v", code, m)
	}
}
