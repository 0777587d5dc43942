package clickhouse

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

// TestOpTableComplete: every op of the catalog's op table has its entry
// in the cluster's maps, and each measure the SQL its kind needs: an
// aggregate, or over the groups both a window function and a stage of
// arrays for ClickHouse 18.16.
func TestOpTableComplete(t *testing.T) {
	plantest.OpsComplete(t, "ClickHouse", slices.Collect(maps.Keys(chMeasures)), slices.Collect(maps.Keys(chConds)), func(o catalog.MeasureOp) string {
		sql := chMeasures[o.Name]
		switch {
		case o.OverGroups && sql.window == nil:
			return "window function over the groups"
		case o.OverGroups && sql.arrays == nil:
			return "stage of arrays for ClickHouse 18.16"
		case !o.OverGroups && sql.agg == nil:
			return "aggregate"
		case o.OfTotal && sql.value == nil:
			return "value from the total"
		}
		return ""
	})
}

// TestEveryMeasureOpCompiles: the cluster's compiler has an aggregate for
// every op the plan takes, and for those over the groups a window
// function and a stage of arrays for ClickHouse 18.16.
func TestEveryMeasureOpCompiles(t *testing.T) {
	for _, op := range catalog.MeasureOps {
		p := plantest.MeasurePlan(t, op)
		m := p.Measures[1]
		if !m.Window() {
			if sql := chMeasureAggregate(m); sql == "" {
				t.Errorf("%s compiles to %q", op, sql)
			}
			continue
		}
		a := &chAnalysis{p: p, cols: []stageCol{{"__g0", "Nullable(String)"}, {"__v0", "UInt64"}, {"__n", "UInt64"}}}
		if sql := chMeasures[op].window(a, m); !strings.Contains(sql, " OVER (") {
			t.Errorf("%s with window functions compiles to %q", op, sql)
		}
		if sql := chMeasures[op].arrays(a, "q", 1, m); !strings.Contains(sql, "ARRAY JOIN") || strings.Contains(sql, "__no_column_") {
			t.Errorf("%s with arrays compiles to %q", op, sql)
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
