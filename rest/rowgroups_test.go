package rest_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"datadesk/api"
	"datadesk/api/apitest"

	"github.com/xuri/excelize/v2"
)

// TestStoredFullRowGroups: an XLSX upload, a files.create call and a
// declared table are stored in full row groups (DuckDB's 122,880 rows),
// as CREATE TABLE AS writes a table, not in the 16,384-row groups that
// made every scan of them slower; engine/rowgroups_test.go holds the
// other load paths.
func TestStoredFullRowGroups(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{Config: api.Config{MaxUpload: 64 << 20, OffloadProviders: []string{"crm"}}})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	const n = 130_000
	x := excelize.NewFile()
	sw, err := x.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	sw.SetRow("A1", []any{"id", "customer"})
	for i := range n {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		sw.SetRow(cell, []any{i, fmt.Sprintf("customer %d", i%7000)})
	}
	sw.Flush()
	var xb bytes.Buffer
	if err := x.Write(&xb); err != nil {
		t.Fatal(err)
	}
	code, up := ts.Upload(token, "big.xlsx", xb.Bytes())
	if code != 201 {
		t.Fatalf("upload: %d %v", code, up)
	}
	xlsxTable := up["file"].(map[string]any)["tables"].([]any)[0].(map[string]any)["id"].(string)
	rows := make([]any, 50_000)
	for i := range rows {
		rows[i] = []any{i, fmt.Sprintf("customer %d", i%7000)}
	}
	code, created := ts.Call(token, "files.create", map[string]any{"filename": "made.xlsx", "columns": []any{"id", "customer"}, "rows": rows})
	if code != 200 {
		t.Fatalf("files.create: %d %v", code, created)
	}
	made := created["result"].(map[string]any)
	code, declared := ts.Declare(token, map[string]any{"provider": "crm", "columns": []any{"id", "customer"}, "rows": rows})
	if code != 201 {
		t.Fatalf("declare: %d %v", code, declared)
	}
	u, err := users.ByName("ana")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, release, err := ts.Server.Engine().Acquire(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, tc := range []struct {
		path, id string
		rows     int64
	}{
		{"XLSX upload", xlsxTable, n},
		{"files.create", made["file"].(map[string]any)["table_id"].(string), 50_000},
		{"declared table", declared["table_id"].(string), 50_000},
	} {
		got, err := store.RowGroups(ctx, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		full := (tc.rows + 122_879) / 122_880
		t.Logf("%s: %d row groups, DuckDB's default %d", tc.path, got, full)
		if got > full+1 {
			t.Errorf("%s: %d row groups, one write makes %d", tc.path, got, full)
		}
	}
}
