package rest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/rest"
	"datadesk/toolcall"

	"github.com/xuri/excelize/v2"
)

func rowsOf(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = []any{fmt.Sprintf("%05d", i), i}
	}
	return out
}

// TestOffloadBoundaries checks both limits exactly: 50 rows pass inline and
// 51 are stored; 12,000 characters of rows pass and 12,001 are stored.
func TestOffloadBoundaries(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{OffloadProviders: []string{"crm"}}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	cols := []any{"Customer ID", "Visits"}
	text := func(n int) []any { return []any{[]any{strings.Repeat("x", n)}} }
	tests := []struct {
		name      string
		provider  string
		columns   []any
		rows      []any
		offloaded bool
	}{
		{"50 rows inline", "crm", cols, rowsOf(50), false},
		{"51 rows stored", "crm", cols, rowsOf(51), true},
		{"12000 characters inline", "crm", []any{"t"}, text(12000 - len(`[[""]]`)), false},
		{"12001 characters stored", "crm", []any{"t"}, text(12001 - len(`[[""]]`)), true},
		{"provider without offload", "mail", cols, rowsOf(500), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, m := ts.Declare(token, map[string]any{"provider": tc.provider, "columns": tc.columns, "rows": tc.rows})
			if m["offloaded"] != tc.offloaded {
				t.Fatalf("got %d offloaded=%v (%v)", code, m["offloaded"], m["reason"])
			}
			if !tc.offloaded {
				if code != 200 || len(m["rows"].([]any)) != len(tc.rows) {
					t.Errorf("inline: %d, %d rows", code, len(m["rows"].([]any)))
				}
				return
			}
			if code != http.StatusCreated || m["table_id"] == nil || m["rows"] != nil {
				t.Fatalf("stored: %d %v", code, m)
			}
			p := m["preview"].(map[string]any)
			pj, _ := json.Marshal(p["rows"])
			if n := len(p["rows"].([]any)); n > rest.OffloadMaxRows || len(pj) > rest.OffloadMaxChars {
				t.Errorf("the preview breaks the limits: %d rows, %d characters", n, len(pj))
			}
			// The stored table works like any other.
			code, q := ts.Call(token, "files.query_table", map[string]any{"file_id": m["table_id"]})
			if code != 200 || q["result"].(map[string]any)["matched_row_count"] != float64(len(tc.rows)) {
				t.Errorf("query the stored table: %d %v", code, q)
			}
			if code, _ := ts.Get(token, "/v1/tables/"+m["table_id"].(string)+"/export?format=xlsx"); code != 200 {
				t.Errorf("export the stored table: %d", code)
			}
		})
	}
	if code, m := ts.Declare(token, map[string]any{"columns": cols, "rows": rowsOf(1)}); code != 400 || apitest.ErrCode(m) != "invalid" {
		t.Errorf("no provider: %d %v", code, m)
	}
}

// TestDeclaredTableBodies: a declared table's body past what is held in
// memory is kept in a file and stored whole, and a body that does not fit
// says which key and what shape, as before it was read member by member.
func TestDeclaredTableBodies(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{OffloadProviders: []string{"crm"}}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	big := make([]any, 50_000)
	for i := range big {
		big[i] = []any{fmt.Sprintf("%05d", i), i, "a note of some length"}
	}
	b, _ := json.Marshal(map[string]any{"provider": "crm", "columns": []any{"Customer ID", "Visits", "Note"}, "rows": big, "title": "visits"})
	if len(b) <= toolcall.BodyInMemory {
		t.Fatalf("the body has %d bytes, not more than the %d held in memory", len(b), toolcall.BodyInMemory)
	}
	code, m, raw := ts.Do("POST", "/v1/tables", token, bytes.NewReader(b), "application/json")
	if code != http.StatusCreated || m["row_count"] != float64(len(big)) {
		t.Fatalf("a large declared table: %d %.300s", code, raw)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"provider": "crm", "rows": [], "colour": 1}`, `unknown key "colour" in the body`},
		{`{"provider": 5, "rows": []}`, "provider must be text, not a number"},
		{`[]`, "the body must be an object"},
		{`{"provider": "crm", "rows": [[1]]} x`, "the body must be one JSON object"},
		{`{"provider": "crm", "rows": [[1],}`, "the body is not valid JSON"},
		{`{"provider": "crm", "rows": "x"}`, "rows must be a list of rows, not text"},
		{`{"provider": "crm", "columns": ["a"], "rows": null}`, ""},
	} {
		code, m, raw := ts.Do("POST", "/v1/tables", token, strings.NewReader(tc.body), "application/json")
		if tc.want == "" {
			if code != http.StatusOK {
				t.Errorf("%s: %d %s", tc.body, code, raw)
			}
			continue
		}
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusBadRequest || apitest.ErrCode(m) != "invalid" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %d %s, want 400 saying %q", tc.body, code, raw, tc.want)
		}
	}
}

// TestLabelsNeverChangeData writes AI labels and checks the cells, the
// default exports and a query are unchanged, and an export that asks for
// labels carries them on their own sheet.
func TestLabelsNeverChangeData(t *testing.T) {
	t.Parallel()
	ts, token, fileID := apitest.SetupOrders(t)
	_, m, _ := ts.Do("GET", "/v1/files/"+fileID, token, nil, "")
	tid := m["file"].(map[string]any)["table_id"].(string)
	_, before := ts.Get(token, "/v1/tables/"+tid+"/rows")
	_, beforeCSV := ts.Get(token, "/v1/tables/"+tid+"/export?format=csv")
	body, _ := json.Marshal(map[string]any{"title": "Orders =1+1", "caption": "Q1 orders", "columns": map[string]string{"amount": "Order value in EUR", "region": "=SUM(A1)"},
		"notes": []string{"North and north are one region"}})
	code, lm, _ := ts.Do("PUT", "/v1/tables/"+tid+"/labels", token, bytes.NewReader(body), "application/json")
	if code != 200 || lm["ai_written"] != true || lm["labels"].(map[string]any)["author"] != "ana" {
		t.Fatalf("put labels: %d %v", code, lm)
	}
	_, after := ts.Get(token, "/v1/tables/"+tid+"/rows")
	_, afterCSV := ts.Get(token, "/v1/tables/"+tid+"/export?format=csv")
	if !bytes.Equal(before, after) || !bytes.Equal(beforeCSV, afterCSV) {
		t.Errorf("labels changed the data")
	}
	_, plain := ts.Get(token, "/v1/tables/"+tid+"/export?format=xlsx")
	x, _ := excelize.OpenReader(bytes.NewReader(plain))
	if got := x.GetSheetList(); len(got) != 1 {
		t.Errorf("labels in an export that did not ask: %v", got)
	}
	_, withLabels := ts.Get(token, "/v1/tables/"+tid+"/export?format=xlsx&labels=true")
	x, _ = excelize.OpenReader(bytes.NewReader(withLabels))
	if got := x.GetSheetList(); len(got) != 2 || got[1] != "AI labels" {
		t.Fatalf("sheets %v", got)
	}
	rows, _ := x.GetRows("AI labels")
	if !strings.HasPrefix(rows[0][0], "Written by an AI") || rows[1][1] != "Orders =1+1" {
		t.Errorf("label sheet %q", rows)
	}
	data, _ := x.GetRows(x.GetSheetList()[0])
	if len(data) != 5 || data[0][0] != "order_id" {
		t.Errorf("data sheet %q", data)
	}
	if code, m, _ := ts.Do("PUT", "/v1/tables/"+tid+"/labels", token, strings.NewReader(`{"columns": {"nope": "x"}}`), "application/json"); code != 400 {
		t.Errorf("unknown column: %d %v", code, m)
	}
}
