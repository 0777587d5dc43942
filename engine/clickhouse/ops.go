package clickhouse

import (
	"strconv"
	"strings"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// ClickHouse's SQL of each op of the catalog's op table
// (catalog.MeasureTable and catalog.FilterTable), in one map per table
// keyed by op, with DuckDB's results: a new op is an entry here, and
// TestOpTableComplete fails while one is missing.

// chMeasureSQL is how the cluster computes a measure: an aggregate of a
// group's rows (its value, or what its value is computed from), or a
// measure over the groups.
type chMeasureSQL struct {
	// agg is the aggregate of the measure's column col (quoted; "" for
	// none).
	agg func(m catalog.MeasureTerm, col string) string
	// value, when set, is the measure's value from its aggregate a; for
	// an op of the total (catalog.MeasureOp.OfTotal), total is the total
	// of every group's, read before ("NULL" for none).
	value func(m catalog.MeasureTerm, a, total string) string
	// wholeSum: of an integer column, the value is a Decimal128 (a sum,
	// exact past 64 bits).
	wholeSum bool
	// window is a measure over the groups with window functions, and
	// arrays the stage that adds it, as column __v<i>, to the stage q on
	// ClickHouse 18.16 (analysis_over.go).
	window func(a *chAnalysis, m catalog.MeasureTerm) string
	arrays func(a *chAnalysis, q string, i int, m catalog.MeasureTerm) string
}

// chMeasures are the SQL of every measure op.
var chMeasures = map[string]chMeasureSQL{
	"count": {agg: func(m catalog.MeasureTerm, col string) string {
		if m.Col == nil {
			return "count()"
		}
		return "count(" + col + ")"
	}},
	// Over no rows uniqExact of a Nullable column is NULL.
	"count_distinct": {agg: func(_ catalog.MeasureTerm, col string) string { return "ifNull(uniqExact(" + col + "), 0)" }},
	"sum":            {agg: chSum, wholeSum: true},
	// A sum divided by the count gives DuckDB's average every time; avg
	// of a decimal varies in its last digit between runs.
	"avg": {agg: func(m catalog.MeasureTerm, col string) string {
		sum := "sum(" + col + ")"
		if m.Col.Type == typing.TypeInteger {
			sum = "sum(toDecimal128(" + col + ", 0))"
		}
		return chNonEmpty(col, "toFloat64("+sum+") / count("+col+")")
	}},
	"min": {agg: chLeast("min", "argMinIf")},
	"max": {agg: chLeast("max", "argMaxIf")},
	// The value at the least or greatest order_by; among rows tied on it,
	// the least value for first, the greatest for last.
	"first":      {agg: chAtOrder("argMinIf")},
	"last":       {agg: chAtOrder("argMaxIf")},
	"median":     {agg: chSorted, value: func(_ catalog.MeasureTerm, a, _ string) string { return chQuantile(a, 0.5) }},
	"percentile": {agg: chSorted, value: func(m catalog.MeasureTerm, a, _ string) string { return chQuantile(a, m.P) }},
	"stddev": {agg: func(_ catalog.MeasureTerm, col string) string {
		return "if(count(" + col + ") < 2, NULL, stddevSamp(toFloat64(" + col + ")))"
	}},
	// The most frequent value, the least of those tied: in the sorted
	// values, the first whose count of equal ones before it, itself
	// included, reaches the greatest count. No alias: the same array is
	// written out again, and ClickHouse computes it once.
	"mode": {agg: func(_ catalog.MeasureTerm, col string) string {
		sorted := "arraySort(groupArray(" + col + "))"
		counts := "arrayEnumerateUniq(" + sorted + ")"
		return chNonEmpty(col, "arrayElement("+sorted+", indexOf("+counts+", arrayReduce('max', "+counts+")))")
	}},
	"share": {
		agg: func(m catalog.MeasureTerm, col string) string {
			if m.Col == nil {
				return "count()"
			}
			return chSum(m, col)
		},
		value: func(_ catalog.MeasureTerm, a, total string) string {
			return "toFloat64(" + a + ") / nullIf(" + total + ", 0)"
		},
	},
	"change": {
		window: chSeries(func(v, prev, _ string) string { return "(" + v + " - " + prev + ")" }),
		arrays: seriesArrays{
			arrays: func(xs, prev string) []string { return []string{xs, prev} },
			out:    func(typ string) string { return chUnpack("(__x0 - __x1)", typ) }, scaled: true,
		}.stage,
	},
	"pct_change": {
		window: chSeries(func(v, prev, _ string) string {
			return "((toFloat64(" + v + ") - toFloat64(" + prev + ")) / nullIf(toFloat64(" + prev + "), 0))"
		}),
		// The same ratio of whole numbers of last places.
		arrays: seriesArrays{
			arrays: func(xs, prev string) []string { return []string{xs, prev} },
			out:    func(string) string { return "(toFloat64(__x0) - toFloat64(__x1)) / nullIf(toFloat64(__x1), 0)" },
		}.stage,
	},
	"running_total": {
		window: chSeries(func(v, _, over string) string { return "sum(" + v + ")" + over }),
		arrays: seriesArrays{
			arrays: func(xs, _ string) []string {
				return []string{"arrayCumSum(arrayMap(__y -> ifNull(__y, 0), " + xs + "))", "arrayCumSum(arrayMap(__y -> isNotNull(__y), " + xs + "))"}
			},
			out: func(typ string) string { return "if(__x1 = 0, NULL, " + chUnpack("__x0", typ) + ")" }, scaled: true,
		}.stage,
	},
	"rank": {
		window: func(_ *chAnalysis, m catalog.MeasureTerm) string {
			var part []string
			for _, g := range m.Within {
				part = append(part, chInternal("g", g))
			}
			return "rank() OVER (" + chPartition(part) + "ORDER BY " + chInternal("v", m.Of) + " " + chDir(m.Desc) + " NULLS LAST)"
		},
		arrays: func(a *chAnalysis, q string, i int, m catalog.MeasureTerm) string {
			return a.rankStage(q, m.Within, "__v"+strconv.Itoa(m.Of), m.Desc, "__v"+strconv.Itoa(i))
		},
	},
}

// chNonEmpty is value, or NULL where column col has no values
// (ClickHouse's aggregates give 0 over an empty set).
func chNonEmpty(col, value string) string { return "if(count(" + col + ") = 0, NULL, " + value + ")" }

// chSum is a column's sum, an integer column's exact past 64 bits.
func chSum(m catalog.MeasureTerm, col string) string {
	if m.Col.Type == typing.TypeInteger {
		return chNonEmpty(col, "sum(toDecimal128("+col+", 0))")
	}
	return chNonEmpty(col, "sum("+col+")")
}

// chSorted is a column's values as doubles, sorted, for a quantile.
func chSorted(_ catalog.MeasureTerm, col string) string {
	return "arraySort(groupArray(toFloat64(" + col + ")))"
}

// chLeast is the least or greatest value (fn min or max) of a column in
// its order: by its natural keys (with arg, argMinIf or argMaxIf) for a
// column of identifiers.
func chLeast(fn, arg string) func(catalog.MeasureTerm, string) string {
	return func(m catalog.MeasureTerm, col string) string {
		if m.Col.Natural() {
			return chNonEmpty(col, arg+"("+col+", tuple("+strings.Join(chNaturalKeys(col), ", ")+"), isNotNull("+col+"))")
		}
		return chNonEmpty(col, fn+"("+col+")")
	}
}

// chAtOrder is the value at the least (fn argMinIf) or greatest
// (argMaxIf) order_by, ties broken by the value in the same direction.
// Tuples compare only without Nullable parts in ClickHouse 18.16.
func chAtOrder(fn string) func(catalog.MeasureTerm, string) string {
	return func(m catalog.MeasureTerm, col string) string {
		order := chCol(m.OrderBy.Key)
		both := "isNotNull(" + order + ") AND isNotNull(" + col + ")"
		return "if(countIf(" + both + ") = 0, NULL, " + fn + "(" + col + ", tuple(assumeNotNull(" + order + "), assumeNotNull(" + col + ")), " + both + "))"
	}
}

// chSeries is a measure over each series of the groups (the groups but
// the series one), in the series' order, with window functions: f gets
// the value it follows, that value in the group before, and the window.
func chSeries(f func(v, prev, over string) string) func(*chAnalysis, catalog.MeasureTerm) string {
	return func(a *chAnalysis, m catalog.MeasureTerm) string {
		p := a.p
		var part []string
		for i := range p.Groups {
			if i != p.Series {
				part = append(part, chInternal("g", i))
			}
		}
		over := " OVER (" + chPartition(part) + "ORDER BY " + chInternal("g", p.Series) + " ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
		v := chInternal("v", m.Of)
		return f(v, "lagInFrame(toNullable("+v+"), 1)"+over, over)
	}
}

// chDecimal reports whether output column i of a plan is a Decimal on
// the cluster: a decimal, or an integer sum.
func chDecimal(out *catalog.Outputs, i int) bool {
	typ := out.OutType(i)
	return typ == typing.TypeDecimal || typ == typing.TypeInteger && chMeasures[out.OutOp(i)].wholeSum
}

// chCondSQL is a condition as its op's SQL reads it: col the column (a
// text column's numbers, with AsNumber), operand the two sides of a
// comparison with value v.
type chCondSQL struct {
	catalog.Cond
	col     string
	operand func(v any) (lhs, rhs string)
}

// chConds are the SQL of every filter op, with DuckDB's semantics.
var chConds = map[string]func(c chCondSQL) string{
	"is_null": func(c chCondSQL) string {
		if c.Null {
			return c.col + " IS NULL"
		}
		return c.col + " IS NOT NULL"
	},
	"is_blank": func(c chCondSQL) string {
		blank := c.col + " IS NULL"
		if c.Col.Type == typing.TypeText {
			blank = "(" + c.col + " IS NULL OR " + chTrim(c.col) + " = '')"
		}
		if c.Null {
			return blank
		}
		return "NOT " + blank
	},
	"contains": func(c chCondSQL) string {
		return "position(lowerUTF8(" + chText(&c.Col) + "), lowerUTF8(" + chLiteral(c.Text) + ")) > 0"
	},
	"starts_with": chTextCond("startsWith"),
	"ends_with":   chTextCond("endsWith"),
	"in": func(c chCondSQL) string {
		lhs, items := c.items()
		return lhs + " IN (" + items + ")"
	},
	// As ne does, not_in keeps empty cells.
	"not_in": func(c chCondSQL) string {
		lhs, items := c.items()
		return "(" + c.col + " IS NULL OR " + lhs + " NOT IN (" + items + "))"
	},
	"between": func(c chCondSQL) string {
		lhs, lo := c.operand(c.Values[0])
		_, hi := c.operand(c.Values[1])
		return "(" + lhs + " >= " + lo + " AND " + lhs + " <= " + hi + ")"
	},
	"eq": chCompare("="),
	// IS DISTINCT FROM: a NULL differs from every value.
	"ne": func(c chCondSQL) string {
		lhs, rhs := c.operand(c.Values[0])
		return "(" + c.col + " IS NULL OR " + lhs + " != " + rhs + ")"
	},
	"gt":  chCompare(">"),
	"gte": chCompare(">="),
	"lt":  chCompare("<"),
	"lte": chCompare("<="),
}

// chTextCond is fn of the column as text and the value, ignoring case.
func chTextCond(fn string) func(c chCondSQL) string {
	return func(c chCondSQL) string {
		return fn + "(lowerUTF8(" + chText(&c.Col) + "), lowerUTF8(" + chLiteral(c.Text) + "))"
	}
}

func chCompare(sym string) func(c chCondSQL) string {
	return func(c chCondSQL) string {
		lhs, rhs := c.operand(c.Values[0])
		return lhs + " " + sym + " " + rhs
	}
}

// items is the left side of in and its list of values.
func (c chCondSQL) items() (lhs, list string) {
	items := make([]string, len(c.Values))
	for i, v := range c.Values {
		lhs, items[i] = c.operand(v)
	}
	return lhs, strings.Join(items, ", ")
}
