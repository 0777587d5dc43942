package toolcall

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"datadesk/engine/catalog"
)

// TestOpTableAgrees: the op table is the one definition of an op. The
// analysis schema's lists are the catalog's (a schema file names them and
// holds none of its own); query_table's specified schema lists what its
// plan takes; each measure op is described to the model by its row's
// Doc. TestOpTableComplete holds both dialects to the table, and the
// oracle's coverage asks for each op.
func TestOpTableAgrees(t *testing.T) {
	file, err := schemaFiles.ReadFile("schemas/files.analyze_table.json")
	if err != nil {
		t.Fatal(err)
	}
	var plain map[string]any
	if err := json.Unmarshal(file, &plain); err != nil {
		t.Fatal(err)
	}
	walkSchema(plain, func(node map[string]any) {
		if list, ok := node["enum"].([]any); ok && len(list) > 2 {
			t.Errorf("the schema file lists %v itself; name the catalog's list (\"@catalog.MeasureOps\")", list)
		}
	})
	tools, err := loadTools()
	if err != nil {
		t.Fatal(err)
	}
	enumAt := func(toolName string, path ...string) []string {
		var node any
		if err := json.Unmarshal(tools[toolName].InputSchema, &node); err != nil {
			t.Fatal(err)
		}
		for _, p := range path {
			if i, err := strconv.Atoi(p); err == nil {
				node = node.([]any)[i]
			} else {
				node = node.(map[string]any)[p]
			}
		}
		var out []string
		for _, v := range node.(map[string]any)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	for _, tc := range []struct {
		name         string
		schema, plan []string
	}{
		{"measures", enumAt("files.analyze_table", "properties", "measures", "items", "properties", "op"), catalog.MeasureOps},
		{"filters", enumAt("files.analyze_table", "properties", "filters", "items", "properties", "op"), catalog.FilterOps},
		{"having", enumAt("files.analyze_table", "properties", "having", "items", "properties", "op"), catalog.HavingOps},
		{"buckets", enumAt("files.analyze_table", "properties", "group_by", "items", "anyOf", "1", "properties", "bucket"), catalog.Buckets},
		{"windows", enumAt("files.analyze_table", "properties", "windows"), catalog.WindowsOptions},
		{"ties", enumAt("files.analyze_table", "properties", "top", "properties", "ties"), catalog.TiesOptions},
		{"query aggregates", enumAt("files.query_table", "properties", "aggregates", "items", "properties", "op"), catalog.QueryAggregateOps},
		{"query filters", enumAt("files.query_table", "properties", "filters", "items", "properties", "op"), catalog.QueryFilterOps},
	} {
		if !slices.Equal(tc.schema, tc.plan) {
			t.Errorf("%s: the schema lists %v, the plan %v", tc.name, tc.schema, tc.plan)
		}
	}
	for _, op := range catalog.QueryFilterOps {
		if !slices.Contains(catalog.FilterOps, op) {
			t.Errorf("query_table's filter op %s is not one of the analysis's", op)
		}
	}
	for _, op := range catalog.HavingOps {
		if !slices.Contains(catalog.FilterOps, op) {
			t.Errorf("having's op %s is not a filter op", op)
		}
	}
	// Every measure op is described to the model by its row of the op
	// table, and the schema file writes none itself: its description
	// names the catalog's text.
	var described strings.Builder
	var expanded any
	if err := json.Unmarshal(tools["files.analyze_table"].InputSchema, &expanded); err != nil {
		t.Fatal(err)
	}
	walkSchema(expanded, func(node map[string]any) {
		if d, ok := node["description"].(string); ok {
			described.WriteString(d + "\n")
		}
	})
	for _, o := range catalog.MeasureTable {
		if !strings.Contains(described.String(), o.Name+" ("+o.Doc+")") {
			t.Errorf("op %s is not described in files.analyze_table's descriptions by its Doc", o.Name)
		}
	}
	for _, name := range []string{"@catalog.MeasureDocs", "@catalog.OverGroupsDocs"} {
		if !strings.Contains(string(file), name) {
			t.Errorf("the schema file does not name %s", name)
		}
	}
}

// walkSchema calls visit on every object of a schema.
func walkSchema(node any, visit func(map[string]any)) {
	switch n := node.(type) {
	case map[string]any:
		visit(n)
		for _, v := range n {
			walkSchema(v, visit)
		}
	case []any:
		for _, v := range n {
			walkSchema(v, visit)
		}
	}
}
