package clickhouse

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestPlanGoldenClickHouse compiles the golden plans to ClickHouse SQL and
// compares them with the .ch.sql.golden files beside them.
func TestPlanGoldenClickHouse(t *testing.T) {
	ch := &Cluster{cfg: Config{Cluster: "datadesk", Database: "datadesk"}}
	plantest.Golden(t, filepath.Join("..", "testdata", "plans"), ".ch.sql.golden", *update, func(p *catalog.Plan) (string, error) {
		stmts, err := ch.Statements(p)
		return strings.ReplaceAll(strings.Join(stmts, ";\n"), " FROM ", "\n FROM ") + "\n", err
	})
}
