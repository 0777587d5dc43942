package rest_test

import (
	"fmt"
	"net/http"
	"testing"

	"datadesk/api/apitest"
)

// TestXLSXWrittenReadsBackTheSame: a workbook files.create writes, with
// every column type, uploaded again gives the same types and values.
func TestXLSXWrittenReadsBackTheSame(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	args := map[string]any{
		"filename": "all.xlsx",
		"columns": []any{
			map[string]any{"key": "customer_id", "label": "Customer ID", "type": "text"},
			map[string]any{"key": "qty", "label": "Qty", "type": "number"},
			map[string]any{"key": "price", "label": "Price", "type": "number"},
			map[string]any{"key": "ratio", "label": "Ratio", "type": "number"},
			map[string]any{"key": "active", "label": "Active", "type": "boolean"},
			map[string]any{"key": "day", "label": "Day", "type": "date"},
			map[string]any{"key": "at", "label": "At", "type": "datetime"},
			map[string]any{"key": "note", "label": "Note", "type": "text"},
			map[string]any{"key": "midnight", "label": "Midnight", "type": "datetime"},
		},
		"rows": []any{
			[]any{"00123", 3, 12.5, 1.5e-19, true, "2024-01-31", "2025-03-01T09:30:15", "first", "2024-01-01T00:00:00"},
			[]any{"007", -4, 3.25, 2.25e-19, false, "1999-12-31", "2025-03-01T23:59:59", nil, "2024-01-02T00:00:00"},
			[]any{"1200", 0, nil, nil, nil, nil, "2024-02-29T00:00:01", "last", nil},
		},
	}
	code, m := ts.Call(token, "files.create", args)
	if code != 200 {
		t.Fatalf("files.create: got %d %v", code, m)
	}
	created := fileOf(t, m)
	code, body := ts.Get("", created["download_url"].(string))
	if code != 200 {
		t.Fatalf("download: %d %s", code, body)
	}
	code, up := ts.Upload(token, "again.xlsx", body)
	if code != http.StatusCreated {
		t.Fatalf("upload: got %d %v", code, up)
	}
	again := up["file"].(map[string]any)

	schema := func(id string) (types []string, rows string) {
		_, tm, _ := ts.Do("GET", "/v1/tables/"+id, token, nil, "")
		for _, c := range tm["table"].(map[string]any)["columns"].([]any) {
			col := c.(map[string]any)
			types = append(types, fmt.Sprintf("%s:%s", col["key"], col["type"]))
		}
		_, rm, _ := ts.Do("GET", "/v1/tables/"+id+"/rows", token, nil, "")
		return types, fmt.Sprint(rm["rows"])
	}
	wantTypes, wantRows := schema(created["table_id"].(string))
	gotTypes, gotRows := schema(again["table_id"].(string))
	if fmt.Sprint(gotTypes) != fmt.Sprint(wantTypes) {
		t.Errorf("types: got %v, want %v", gotTypes, wantTypes)
	}
	if gotRows != wantRows {
		t.Errorf("rows: got %s, want %s", gotRows, wantRows)
	}
	t.Logf("types %v rows %s", gotTypes, gotRows)
}
