package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"datadesk/engine/catalog"
)

// toolBudget is the most one tool's entry may take, as compact JSON, in
// any provider format: files.analyze_table's was 9.9 KB of a 14.9 KB list.
const toolBudget = 6 << 10

// TestToolEntriesWithinBudget: every tool's entry in every provider format
// of GET /v1/tools, and in MCP tools/list read by the SDK's client, fits
// its budget, and its schema compiles in a standard validator.
func TestToolEntriesWithinBudget(t *testing.T) {
	ts, users := newServer(t, 1<<20)
	token := addUser(t, users, "ana", "analyst")
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
	for _, format := range []string{FormatOpenAI, FormatAnthropic, FormatMCP} {
		code, m, raw := ts.do("GET", "/v1/tools?format="+format, token, nil, "")
		if code != http.StatusOK {
			t.Fatalf("got %d %s", code, raw)
		}
		for _, x := range m["tools"].([]any) {
			name, schema := providerParts(t, format, x.(map[string]any))
			check(format, name, x, schema)
		}
	}
	cs := mcpTransports["http"](t, ts, token)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		check("tools/list", tl.Name, tl, tl.InputSchema)
	}
}

// TestSchemaOpsAgree: every list of ops in files.analyze_table's schema is
// the list the plan checks, so an op added to one and not the other fails
// here; TestEveryMeasureOpCompiles holds both dialects to the plan's.
func TestSchemaOpsAgree(t *testing.T) {
	raw, err := schemaFiles.ReadFile("schemas/files.analyze_table.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	enum := func(path ...string) []string {
		var node any = s
		for _, p := range path {
			node = node.(map[string]any)[p]
		}
		var out []string
		for _, v := range node.(map[string]any)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	for _, tc := range []struct {
		schema, plan []string
	}{
		{enum("properties", "measures", "items", "properties", "op"), catalog.MeasureOps},
		{enum("properties", "filters", "items", "properties", "op"), catalog.FilterOps},
		{enum("properties", "windows"), []string{catalog.WindowsFiltered, catalog.WindowsAll}},
		{enum("properties", "top", "properties", "ties"), []string{"keep", "cut"}},
	} {
		if !slices.Equal(tc.schema, tc.plan) {
			t.Errorf("the schema lists %v, the plan %v", tc.schema, tc.plan)
		}
	}
	var buckets []string
	for _, alt := range s["properties"].(map[string]any)["group_by"].(map[string]any)["items"].(map[string]any)["anyOf"].([]any) {
		if props, ok := alt.(map[string]any)["properties"].(map[string]any); ok {
			for _, v := range props["bucket"].(map[string]any)["enum"].([]any) {
				buckets = append(buckets, fmt.Sprint(v))
			}
		}
	}
	if !slices.Equal(buckets, catalog.Buckets) {
		t.Errorf("the schema's buckets %v, the plan's %v", buckets, catalog.Buckets)
	}
}
