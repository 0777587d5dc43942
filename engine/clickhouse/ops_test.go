package clickhouse

import (
	"strings"
	"testing"

	"datadesk/engine/catalog"
	"datadesk/engine/catalog/plantest"
)

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
		if sql := a.windowFn(m); !strings.Contains(sql, " OVER (") {
			t.Errorf("%s with window functions compiles to %q", op, sql)
		}
		var sql string
		if op == "rank" {
			sql = a.rankStage("q", m.Within, "__v0", m.Desc, "__v1")
		} else {
			sql = a.seriesStage("q", 1, m)
		}
		if !strings.Contains(sql, "ARRAY JOIN") || strings.Contains(sql, "__no_column_") {
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
