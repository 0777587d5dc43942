package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"datadesk/api/apitest"
	"datadesk/rest"
)

// toolBudget is the most one tool's entry may take, as compact JSON, in
// any provider format: files.analyze_table's was 9.9 KB of a 14.9 KB list.
const toolBudget = 6 << 10

// TestToolEntriesWithinBudget: every tool's entry in every provider format
// of GET /v1/tools, and in MCP tools/list read by the SDK's client, fits
// its budget, and its schema compiles in a standard validator.
func TestToolEntriesWithinBudget(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, apitest.Options{MaxUpload: 1 << 20})
	users := ts.Users
	token := apitest.AddUser(t, users, "ana", "analyst")
	check := func(where, name string, entry, schema any) {
		b, err := json.Marshal(entry)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > toolBudget {
			t.Errorf("%s %s: %d bytes, budget %d", where, name, len(b), toolBudget)
		}
		t.Logf("%s %s: %d bytes", where, name, len(b))
		compileSchema(t, schema)
	}
	for _, format := range []string{rest.FormatOpenAI, rest.FormatAnthropic, rest.FormatMCP} {
		code, m, raw := ts.Do("GET", "/v1/tools?format="+format, token, nil, "")
		if code != http.StatusOK {
			t.Fatalf("got %d %s", code, raw)
		}
		for _, x := range m["tools"].([]any) {
			name, schema := providerParts(t, format, x.(map[string]any))
			check(format, name, x, schema)
		}
	}
	cs := apitest.MCPTransports["http"](t, ts, token)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		check("tools/list", tl.Name, tl, tl.InputSchema)
	}
}
