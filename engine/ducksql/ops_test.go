package ducksql

import (
	"maps"
	"slices"
	"testing"

	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

// TestOpTableComplete: every op of the catalog's op table has its entry
// in DuckDB's maps, and each measure the SQL its kind needs.
func TestOpTableComplete(t *testing.T) {
	plantest.OpsComplete(t, "DuckDB", slices.Collect(maps.Keys(measures)), slices.Collect(maps.Keys(conditions)), func(o catalog.MeasureOp) string {
		sql := measures[o.Name]
		switch {
		case o.OverGroups && sql.window == nil:
			return "window over the groups"
		case !o.OverGroups && sql.agg == nil:
			return "aggregate"
		case o.OfTotal && sql.total == nil:
			return "value from the total"
		}
		return ""
	})
}

// TestEveryMeasureOpCompiles: DuckDB's compiler has SQL for every op the
// plan takes, an aggregate or a window over the groups.
func TestEveryMeasureOpCompiles(t *testing.T) {
	for _, op := range catalog.MeasureOps {
		p := plantest.MeasurePlan(t, op)
		m := p.Measures[1]
		if sql := aggregate(m); sql == "" && !(m.Window() && measures[op].window(p, m) != "") {
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
