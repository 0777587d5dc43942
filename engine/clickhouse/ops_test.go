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
