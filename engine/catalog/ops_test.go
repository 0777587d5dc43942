package catalog_test

import (
	"slices"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

// TestEveryMeasureOpChecks: each op MeasureOps lists is checked by the
// plan, and an op it does not list is refused with the list.
func TestEveryMeasureOpChecks(t *testing.T) {
	for _, op := range catalog.MeasureOps {
		if p := plantest.MeasurePlan(t, op); p.Measures[1].Op != op {
			t.Errorf("%s planned as %s", op, p.Measures[1].Op)
		}
	}
	_, err := catalog.AnalysisFor(&catalog.Table{ID: "t", Columns: []catalog.Column{{Key: "n", Type: "integer"}}}, nil,
		catalog.Analysis{FileID: "t", Measures: []catalog.Measure{{Op: "mode", Column: "n"}}})
	if e := datadesk.AsError(err); e == nil || !slices.Equal(e.Allowed, catalog.MeasureOps) {
		t.Errorf("an unknown op: %v, want MeasureOps as allowed", err)
	}
}
