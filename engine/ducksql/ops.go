package ducksql

import (
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// DuckDB's SQL of each op of the catalog's op table (catalog.MeasureTable
// and catalog.FilterTable), in one map per table keyed by op: a new op is
// an entry here, and TestOpTableComplete fails while one is missing.

// measureSQL is how DuckDB computes a measure: an aggregate of a group's
// rows (its value, or what its value is computed from), or a window over
// the groups.
type measureSQL struct {
	// agg is the aggregate of the measure's column col (quoted; "" for
	// none).
	agg func(m catalog.MeasureTerm, col string) string
	// total, for an op of the total (catalog.MeasureOp.OfTotal), is its
	// value from its aggregate a of each group, the groups being the
	// window.
	total func(a string) string
	// window is a measure over the groups (catalog.MeasureOp.OverGroups).
	window func(p *catalog.AnalysisPlan, m catalog.MeasureTerm) string
}

// measures are the SQL of every measure op.
var measures = map[string]measureSQL{
	"count": {agg: func(m catalog.MeasureTerm, col string) string {
		if m.Col == nil {
			return "count(*)"
		}
		return "count(" + col + ")"
	}},
	"count_distinct": {agg: func(_ catalog.MeasureTerm, col string) string { return "count(DISTINCT " + col + ")" }},
	"sum":            {agg: called("sum")},
	"avg":            {agg: called("avg")},
	"min":            {agg: least("min")},
	"max":            {agg: least("max")},
	// The value at the least or greatest order_by; among rows tied on
	// it, the least value for first, the greatest for last.
	"first":  {agg: atOrder("arg_min")},
	"last":   {agg: atOrder("arg_max")},
	"median": {agg: func(_ catalog.MeasureTerm, col string) string { return "quantile_cont(" + asDouble(col) + ", 0.5)" }},
	"percentile": {agg: func(m catalog.MeasureTerm, col string) string {
		return "quantile_cont(" + asDouble(col) + ", " + strconv.FormatFloat(m.P, 'g', -1, 64) + ")"
	}},
	"stddev": {agg: func(_ catalog.MeasureTerm, col string) string { return "stddev_samp(" + asDouble(col) + ")" }},
	// The most frequent value, the least of those tied: the counts of
	// each value, sorted by count down and value up.
	"mode": {agg: func(_ catalog.MeasureTerm, col string) string {
		return "list_sort(list_transform(map_entries(histogram(" + col + ")), lambda e: {'n': -CAST(e.value AS BIGINT), 'v': e.key}))[1].v"
	}},
	"share": {
		agg: func(m catalog.MeasureTerm, col string) string {
			if m.Col == nil {
				return "count(*)"
			}
			return "sum(" + col + ")"
		},
		total: func(a string) string { return "CAST(" + a + " AS DOUBLE) / sum(" + a + ") OVER ()" },
	},
	"change": {window: series(func(val, prev, _ string) string { return "(" + val + " - " + prev + ")" })},
	"pct_change": {window: series(func(val, prev, _ string) string {
		return "((CAST(" + val + " AS DOUBLE) - " + prev + ") / CAST(" + prev + " AS DOUBLE))"
	})},
	"running_total": {window: series(func(val, _, over string) string {
		return "sum(" + val + ")" + over + " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
	})},
	"rank": {window: func(_ *catalog.AnalysisPlan, m catalog.MeasureTerm) string {
		var part []string
		for _, g := range m.Within {
			part = append(part, analysisCol("g", g))
		}
		return "rank() OVER (" + partition(part) + "ORDER BY " + analysisCol("v", m.Of) + " " + direction(m.Desc) + " NULLS LAST)"
	}},
}

func asDouble(col string) string { return "CAST(" + col + " AS DOUBLE)" }

// called is the aggregate DuckDB names fn.
func called(fn string) func(catalog.MeasureTerm, string) string {
	return func(_ catalog.MeasureTerm, col string) string { return fn + "(" + col + ")" }
}

// least is min or max (fn) of a column in its order.
func least(fn string) func(catalog.MeasureTerm, string) string {
	return func(m catalog.MeasureTerm, col string) string {
		if m.Col.Ordering() == catalog.ByLength {
			// Digits without a leading zero, at most 38 of them: the
			// least or greatest number, written again, is the value.
			return "CAST(" + fn + "(TRY_CAST(" + col + " AS UHUGEINT)) AS VARCHAR)"
		}
		if m.Col.Natural() {
			// The least or greatest by the natural order: its keys as one
			// struct, compared field by field.
			keys := orderKeys(col, m.Col.Ordering())
			fields := make([]string, len(keys))
			for i, k := range keys {
				fields[i] = "'k" + strconv.Itoa(i) + "': " + k.expr
			}
			return "arg_" + fn + "(" + col + ", {" + strings.Join(fields, ", ") + "}) FILTER (WHERE " + col + " IS NOT NULL)"
		}
		return fn + "(" + col + ")"
	}
}

// atOrder is the value at the least (fn arg_min) or greatest (arg_max)
// order_by, ties broken by the value in the same direction.
func atOrder(fn string) func(catalog.MeasureTerm, string) string {
	return func(m catalog.MeasureTerm, col string) string {
		order := Ident(m.OrderBy.Key)
		return fn + "(" + col + ", {'o': " + order + ", 'v': " + col + "}) FILTER (WHERE " + order + " IS NOT NULL AND " + col + " IS NOT NULL)"
	}
}

// series is a measure over each series of the groups (the groups but the
// series one), in the series' order: f gets the value it follows, that
// value in the group before, and the window.
func series(f func(val, prev, over string) string) func(*catalog.AnalysisPlan, catalog.MeasureTerm) string {
	return func(p *catalog.AnalysisPlan, m catalog.MeasureTerm) string {
		val := analysisCol("v", m.Of)
		var part []string
		for i := range p.Groups {
			if i != p.Series {
				part = append(part, analysisCol("g", i))
			}
		}
		over := " OVER (" + partition(part) + "ORDER BY " + analysisCol("g", p.Series)
		return f(val, "lag("+val+")"+over+")", over)
	}
}

// cond is a condition as its op's SQL reads it: col the column (a text
// column's numbers, with AsNumber), lhs and place the two sides of a
// comparison with one value, values those bound.
type cond struct {
	catalog.Cond
	col, lhs, place string
	values          []any
}

// conditions are the SQL of every filter op, with the values they bind.
var conditions = map[string]func(c cond) (string, []any){
	"is_null": func(c cond) (string, []any) {
		if c.Null {
			return c.col + " IS NULL", nil
		}
		return c.col + " IS NOT NULL", nil
	},
	"is_blank": func(c cond) (string, []any) {
		blank := c.col + " IS NULL"
		if c.Col.Type == typing.TypeText {
			blank = "(" + c.col + " IS NULL OR " + Trim(c.col) + " = '')"
		}
		if c.Null {
			return blank, nil
		}
		return "NOT " + blank, nil
	},
	"contains":    textCondition("contains"),
	"starts_with": textCondition("starts_with"),
	"ends_with":   textCondition("ends_with"),
	"in":          func(c cond) (string, []any) { return c.lhs + " IN (" + marks(c) + ")", c.values },
	// As ne does, not_in keeps empty cells: they differ from every value.
	"not_in": func(c cond) (string, []any) {
		return "(" + c.col + " IS NULL OR " + c.lhs + " NOT IN (" + marks(c) + "))", c.values
	},
	"between": func(c cond) (string, []any) { return c.lhs + " BETWEEN " + c.place + " AND " + c.place, c.values },
	"eq":      comparison(" = "),
	"ne":      comparison(" IS DISTINCT FROM "),
	"gt":      comparison(" > "),
	"gte":     comparison(" >= "),
	"lt":      comparison(" < "),
	"lte":     comparison(" <= "),
}

// textCondition is fn of the column as text and the value, ignoring case.
func textCondition(fn string) func(c cond) (string, []any) {
	return func(c cond) (string, []any) {
		return fn + "(lower(" + textOf(&c.Col) + "), lower(?))", []any{c.Text}
	}
}

func comparison(sym string) func(c cond) (string, []any) {
	return func(c cond) (string, []any) { return c.lhs + sym + c.place, c.values }
}

// marks is a mark for each of a condition's values.
func marks(c cond) string {
	m := make([]string, len(c.values))
	for i := range m {
		m[i] = c.place
	}
	return strings.Join(m, ", ")
}
