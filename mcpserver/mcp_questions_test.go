package mcpserver_test

import (
	"datadesk/api/apitest"
	"strings"
	"testing"
)

// TestMCPQuestionsOfNewCapabilities asks, over the MCP SDK's client on
// stdio and HTTP and reading only the text content, a question for each
// of last values, ties at top's cut and windows over every bucket, whose
// answers were wrong without a sign before.
func TestMCPQuestionsOfNewCapabilities(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	// Deaths to date, revised downward within July and August.
	deaths := "day,deaths\n2024-06-10,100\n2024-06-30,330\n2024-07-10,700\n2024-07-20,764\n2024-07-31,721\n2024-08-10,600\n2024-08-31,563\n"
	// Two sectors' additions; energy's latest is tied.
	adds := "sector,name,added\nenergy,Oil Co,2024-03-01\nenergy,Gas Co,2024-05-02\nenergy,Wind Co,2024-05-02\ntech,Chip Co,2024-04-01\ntech,Soft Co,2024-02-01\n"
	ids := map[string]string{}
	for name, body := range map[string]string{"deaths.csv": deaths, "adds.csv": adds} {
		code, up := ts.Upload(token, name, []byte(body))
		if code != 201 {
			t.Fatalf("upload %s: %d %v", name, code, up)
		}
		ids[name] = up["file"].(map[string]any)["id"].(string)
	}
	month := map[string]any{"column": "day", "bucket": "month"}
	for name, connect := range apitest.MCPTransports {
		t.Run(name, func(t *testing.T) {
			cs := connect(t, ts, token)
			ask := func(args map[string]any, want ...string) {
				t.Helper()
				res, _ := apitest.CallMCP(t, cs, "files_analyze_table", args)
				text := apitest.TextOf(res)
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("the text lacks %q:\n%s", w, text)
					}
				}
			}
			// The deaths to date at each month's end.
			ask(map[string]any{"file_id": ids["deaths.csv"], "group_by": []any{month},
				"measures": []any{map[string]any{"op": "last", "column": "deaths", "order_by": "day"}}},
				"2024-07-01 | 721", "2024-08-01 | 563")
			// Each sector's latest addition: energy's two of one day.
			ask(map[string]any{"file_id": ids["adds.csv"], "group_by": []any{"sector", "name"},
				"measures": []any{map[string]any{"op": "max", "column": "added", "name": "latest"}},
				"top":      map[string]any{"n": 1, "per": []any{"sector"}, "by": "latest"}},
				"energy | Gas Co | 2024-05-02", "energy | Wind Co | 2024-05-02", "tech | Chip Co | 2024-04-01",
				"top kept 1 more group than n, tied on latest")
			// A running total from July, carried in from June.
			ask(map[string]any{"file_id": ids["adds.csv"], "group_by": []any{map[string]any{"column": "added", "bucket": "month"}},
				"measures": []any{map[string]any{"op": "count", "name": "n"}, map[string]any{"op": "running_total", "of": "n"}},
				"filters":  []any{map[string]any{"column": "added", "op": "gte", "value": "2024-04-01"}}, "windows": "all"},
				"2024-04-01 | 1 | 3", "2024-05-01 | 2 | 5", "running_n ran over every month")
			ask(map[string]any{"file_id": ids["adds.csv"], "group_by": []any{map[string]any{"column": "added", "bucket": "month"}},
				"measures": []any{map[string]any{"op": "count", "name": "n"}, map[string]any{"op": "running_total", "of": "n"}},
				"filters":  []any{map[string]any{"column": "added", "op": "gte", "value": "2024-04-01"}}},
				"2024-04-01 | 1 | 1", "2024-05-01 | 2 | 3", "ran over the groups of the filtered rows only (windows: filtered)", "windows: all carries")
		})
	}
}
