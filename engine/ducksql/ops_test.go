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

// TestEveryFilterOpCompiles: every filter op of the catalog's table is a
// condition of its own in DuckDB's SQL.
func TestEveryFilterOpCompiles(t *testing.T) {
	seen := map[string]string{}
	for _, op := range catalog.FilterOps {
		sql, _ := condition(plantest.FilterPlan(t, op).Where.Conds[0])
		if sql == "" {
			t.Errorf("%s compiles to nothing", op)
		} else if prev, ok := seen[sql]; ok {
			t.Errorf("%s and %s both compile to %s", op, prev, sql)
		}
		seen[sql] = op
	}
}
