package ducksql

import (
	"testing"

	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

// TestEveryMeasureOpCompiles: DuckDB's compiler has SQL for every op the
// plan takes, an aggregate or a window over the groups.
func TestEveryMeasureOpCompiles(t *testing.T) {
	for _, op := range catalog.MeasureOps {
		p := plantest.MeasurePlan(t, op)
		m := p.Measures[1]
		if sql := Aggregate(m); sql == "" && !(m.Window() && Window(p, m) != "") {
			t.Errorf("%s compiles to nothing", op)
		}
	}
}
