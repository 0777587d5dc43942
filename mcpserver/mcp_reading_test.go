package mcpserver_test

import (
	"datadesk/api/apitest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPSeesAndCorrectsAReading: an assistant with only the MCP tools,
// reading only their text, sees how each table of a workbook was read
// (its sheets, header rows, rows kept out and the import's notes), is
// told which table a workbook's id answered from, and reads a file again
// with its header row named, over the SDK's own client on stdio and HTTP.
func TestMCPSeesAndCorrectsAReading(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	ids := map[string]string{}
	for _, p := range []string{"messy/wti-day.xls", "public/skipping.xlsx"} {
		b, err := os.ReadFile(filepath.Join("..", "ingest", "testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		code, up := ts.Upload(token, filepath.Base(p), b)
		if code != 201 {
			t.Fatalf("upload %s: %d %v", p, code, up)
		}
		ids[filepath.Base(p)] = up["file"].(map[string]any)["id"].(string)
	}
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			cs := connect(t, ts, token)
			has := func(text string, want ...string) {
				t.Helper()
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("the text lacks %q:\n%s", w, text)
					}
				}
			}
			res, _ := apitest.CallMCP(t, cs, "files_read", map[string]any{"file_id": ids["wti-day.xls"]})
			has(apitest.TextOf(res), "2 tables:", "Data 1 (t_", "8225 rows, 2 columns, header row 3",
				`kept out, above: row 1 "Back to Contents | Data 1: Cushing, OK WTI Spot Price FOB (Dollars per Barrel)"`,
				`kept out, above: row 2 "Sourcekey | RWTC"`, `answers from its first table, "Contents"`, "files.analyze_table with reading")

			res, _ = apitest.CallMCP(t, cs, "files_read", map[string]any{"session_only": false})
			has(apitest.TextOf(res), "wti-day.xls ("+ids["wti-day.xls"]+")", "Data 1 (t_", "2 rows kept out",
				"occupied_row_and_blank_row", "the header was not certain")

			// A count on the workbook's id says which table answered.
			res, _ = apitest.CallMCP(t, cs, "files_query_table", map[string]any{"file_id": ids["wti-day.xls"]})
			has(apitest.TextOf(res), "whose first table \"Contents\"", `"Data 1" (t_`, "Give a table's id as file_id")

			// The title over the table was taken as its header; the
			// assistant reads the sheet again naming row 3.
			res, st := apitest.CallMCP(t, cs, "files_analyze_table", map[string]any{"file_id": ids["skipping.xlsx"],
				"reading":  map[string]any{"header_rows": []any{3}, "sheet": "occupied_row_and_blank_row"},
				"group_by": []any{"var1"}})
			has(apitest.TextOf(res), `read again as asked (header row 3 of sheet "occupied_row_and_blank_row")`, "v2,1")
			again, _ := st["read_again"].(map[string]any)
			file, _ := again["file"].(map[string]any)
			if file == nil || file["id"] == ids["skipping.xlsx"] || again["table_id"] == nil {
				t.Fatalf("read_again: %v", st["read_again"])
			}
			res, _ = apitest.CallMCP(t, cs, "files_read", map[string]any{"file_id": file["id"]})
			has(apitest.TextOf(res), "occupied_row_and_blank_row", "header row 3 (as asked)")

			// A row named that holds nothing is refused, naming the argument.
			res, _ = apitest.CallMCP(t, cs, "files_analyze_table", map[string]any{"file_id": ids["skipping.xlsx"],
				"reading": map[string]any{"header_rows": []any{40}, "sheet": "occupied_row_and_blank_row"}})
			if !res.IsError {
				t.Fatalf("a header row past the sheet: %s", apitest.TextOf(res))
			}
			has(apitest.TextOf(res), "reading.header_row", "no value in row 40")
		})
	}
}
