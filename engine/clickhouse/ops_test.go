package clickhouse

import (
	"testing"

	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

// TestEveryMeasureOpCompiles: the cluster's compiler has an aggregate for
// every op the plan takes but those over the groups, which ClickHouse
// 18.16 cannot compute and Analyze refuses.
func TestEveryMeasureOpCompiles(t *testing.T) {
	for _, op := range catalog.MeasureOps {
		m := plantest.MeasurePlan(t, op).Measures[1]
		if sql := chMeasureAggregate(m); sql == "" && !m.Window() {
			t.Errorf("%s compiles to %q", op, sql)
		}
	}
}

// TestEveryFilterOpCompiles: every filter op of the catalog's table is a
// condition of its own in ClickHouse's SQL.
func TestEveryFilterOpCompiles(t *testing.T) {
	seen := map[string]string{}
	for _, op := range catalog.FilterOps {
		sql := chCond(plantest.FilterPlan(t, op).Where.Conds[0])
		if sql == "" {
			t.Errorf("%s compiles to nothing", op)
		} else if prev, ok := seen[sql]; ok {
			t.Errorf("%s and %s both compile to %s", op, prev, sql)
		}
		seen[sql] = op
	}
}
