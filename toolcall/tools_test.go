package toolcall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestToolSchemas: the specified tools carry their specification's
// schemas exactly; files.analyze_table its own, its lists the catalog's.
func TestToolSchemas(t *testing.T) {
	tools, err := loadTools()
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 4 {
		t.Fatalf("got %d tools, want the three specified tools and files.analyze_table", len(tools))
	}
	for name, tool := range tools {
		path := filepath.Join("testdata", "seed", name+".json")
		if name == "files.analyze_table" {
			path = filepath.Join("schemas", name+".json")
		}
		want, err := os.ReadFile(path)
		if err == nil && name == "files.analyze_table" {
			want, err = expandLists(want)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got, wantSchema any
		json.Unmarshal(tool.InputSchema, &got)
		json.Unmarshal(want, &wantSchema)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(wantSchema)
		if string(g) != string(w) {
			t.Errorf("%s schema differs from its specification:\n%s\n%s", name, g, w)
		}
	}
}
