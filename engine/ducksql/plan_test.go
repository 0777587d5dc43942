package ducksql

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestPlanGolden turns each testdata/plans/*.json query into its statement
// and bound values and compares them with the .sql.golden beside it; run
// with -update to rewrite the golden files after a deliberate change.
func TestPlanGolden(t *testing.T) {
	plantest.Golden(t, filepath.Join("..", "testdata", "plans"), ".sql.golden", *update, func(p *catalog.Plan) (string, error) {
		sql, params := Query(p)
		pj, _ := json.Marshal(params)
		return strings.ReplaceAll(sql, " FROM ", "\n FROM ") + "\n-- params: " + string(pj) + "\n", nil
	})
}

// TestAnalysisStatementLinear: a computed measure compiles once, in its
// own stage, so measures that use each other many times make a statement
// that grows with what was written (16 uses over 7 levels would be 16^7
// terms written out).
func TestAnalysisStatementLinear(t *testing.T) {
	table := &catalog.Table{ID: "t1", Columns: []catalog.Column{{Key: "region", Type: "text"}}}
	sizes := map[int]int{}
	for _, depth := range []int{1, 7} {
		ms := []catalog.Measure{{Op: "count"}, {Name: "a0", Expr: "count/count"}}
		for i := 1; i <= depth; i++ {
			ms = append(ms, catalog.Measure{Name: fmt.Sprintf("a%d", i), Expr: strings.TrimSuffix(strings.Repeat(fmt.Sprintf("a%d*", i-1), 16), "*")})
		}
		p, err := catalog.AnalysisFor(table, nil, catalog.Analysis{FileID: "t1", GroupBy: []catalog.GroupBy{{Column: "region"}}, Measures: ms})
		if err != nil {
			t.Fatal(err)
		}
		q, _ := Analysis(p)
		sizes[depth] = len(q)
	}
	if per := (sizes[7] - sizes[1]) / 6; per > 1000 {
		t.Errorf("each level adds %d characters (%v), want a stage of about its own expression", per, sizes)
	}
	// The largest analysis the limits allow: every measure computed, each
	// of the longest expression naming the one before as often as it fits.
	ms := []catalog.Measure{{Op: "count"}, {Name: "a0", Expr: "count/count"}}
	for i := 1; len(ms) < catalog.MaxMeasures; i++ {
		ref := fmt.Sprintf("a%d+", i-1)
		ms = append(ms, catalog.Measure{Name: fmt.Sprintf("a%d", i), Expr: strings.TrimSuffix(strings.Repeat(ref, 200/len(ref)), "+")})
	}
	p, err := catalog.AnalysisFor(table, nil, catalog.Analysis{FileID: "t1", GroupBy: []catalog.GroupBy{{Column: "region"}}, Measures: ms})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := Analysis(p)
	t.Logf("the largest analysis compiles to %d bytes", len(q))
	if len(q) > catalog.MaxCompiledSQL/4 {
		t.Errorf("the largest analysis compiles to %d bytes, near the bound of %d", len(q), catalog.MaxCompiledSQL)
	}
	if err := catalog.CheckCompiled(strings.Repeat("x", catalog.MaxCompiledSQL+1)); datadesk.ErrorCode(err) != datadesk.Invalid || !strings.Contains(err.Error(), "measures") {
		t.Errorf("a statement past the bound: %v, want invalid naming the measures", err)
	}
}
