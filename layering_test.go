package datadesk_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// layers orders the module's packages: a package imports only packages of
// lower layers, never one beside or above it. A package missing here fails
// the test, so a new one gets a place.
var layers = [][]string{
	{"datadesk", "datadesk/cluster", "datadesk/internal/testenv", "datadesk/internal/procmem", "datadesk/engine/clickhousetest", "datadesk/answers"},
	{"datadesk/engine/typing", "datadesk/rbac", "datadesk/cluster/haproxytest", "datadesk/links"},
	{"datadesk/engine/catalog", "datadesk/serverdb"},
	{"datadesk/engine/ducksql", "datadesk/engine/clickhouse", "datadesk/engine/catalog/plantest"},
	{"datadesk/engine"},
	{"datadesk/ingest", "datadesk/exports", "datadesk/backup", "datadesk/handoff"},
	{"datadesk/toolcall", "datadesk/tableview"},
	{"datadesk/surface"},
	{"datadesk/mcpserver", "datadesk/web", "datadesk/rest"},
	{"datadesk/api"},
	{"datadesk/bench", "datadesk/api/apitest"},
	{"datadesk/cmd/datadesk", "datadesk/cmd/datadesk-bench"},
}

// forbidden lists, per package, what must not be among its dependencies,
// direct or not: value typing and the catalog speak no SQL, the DuckDB
// dialect builds text without the driver, and the ClickHouse backend sees
// the catalog and the plan, never the DuckDB store; the server's binary
// links no benchmark; the tool-call pipeline knows no HTTP surface, and
// the surfaces (mcpserver, web, rest) import the pipeline and what the
// server lends them (surface, which may name the pipeline's types), never
// each other nor the server (api), whose routes wire them.
var forbidden = map[string][]string{
	"datadesk/engine/typing":     {"runtime/cgo", "database/sql", "github.com/duckdb/duckdb-go/v2", "datadesk/engine/catalog", "datadesk/engine"},
	"datadesk/engine/catalog":    {"runtime/cgo", "database/sql", "github.com/duckdb/duckdb-go/v2", "datadesk/engine"},
	"datadesk/engine/clickhouse": {"datadesk/engine", "github.com/duckdb/duckdb-go/v2", "database/sql"},
	"datadesk/engine/ducksql":    {"datadesk/engine", "github.com/duckdb/duckdb-go/v2", "database/sql", "runtime/cgo"},
	"datadesk/serverdb":          {"datadesk/engine", "datadesk/engine/catalog"},
	"datadesk/engine":            {"datadesk/engine/clickhouse", "datadesk/api", "datadesk/serverdb"},
	"datadesk/cmd/datadesk":      {"datadesk/bench"},
	"datadesk/toolcall":          {"datadesk/api", "datadesk/mcpserver", "datadesk/web", "datadesk/rest", "github.com/labstack/echo/v5", "github.com/modelcontextprotocol/go-sdk/mcp"},
	"datadesk/surface":           {"datadesk/api", "datadesk/mcpserver", "datadesk/web", "datadesk/rest"},
	"datadesk/tableview":         {"datadesk/api", "datadesk/mcpserver", "datadesk/web", "datadesk/rest", "github.com/labstack/echo/v5"},
	"datadesk/mcpserver":         {"datadesk/api", "datadesk/web", "datadesk/rest"},
	"datadesk/web":               {"datadesk/api", "datadesk/mcpserver", "datadesk/rest"},
	"datadesk/rest":              {"datadesk/api", "datadesk/mcpserver", "datadesk/web"},
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestPackageLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layer := map[string]int{}
	for i, ps := range layers {
		for _, p := range ps {
			layer[p] = i
		}
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		at, ok := layer[p.ImportPath]
		if !ok {
			t.Errorf("%s has no layer; give it one in layers", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if l, ok := layer[imp]; ok && l >= at {
				t.Errorf("%s (layer %d) imports %s (layer %d)", p.ImportPath, at, imp, l)
			} else if !ok && strings.HasPrefix(imp, "datadesk/") {
				t.Errorf("%s imports %s, which has no layer", p.ImportPath, imp)
			}
		}
		deps := map[string]bool{}
		for _, d := range p.Deps {
			deps[d] = true
		}
		if p.ImportPath == "datadesk/engine" && !deps["github.com/duckdb/duckdb-go/v2"] {
			t.Fatal("go list reports no dependencies of datadesk/engine; the checks below would see nothing")
		}
		for _, f := range forbidden[p.ImportPath] {
			if deps[f] {
				t.Errorf("%s depends on %s", p.ImportPath, f)
			}
		}
	}
	if seen < len(layer) {
		t.Errorf("go list saw %d packages, the layers name %d", seen, len(layer))
	}
}
