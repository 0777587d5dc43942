package clickhouse

import (
	"math"
	"strconv"
	"strings"
	"time"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// The ClickHouse dialect of a plan. A table on the cluster keeps every
// column Nullable and adds the row number __row (UInt64, file order from
// 0). Types where ClickHouse 18.16 would lose data are stored as text:
// dates as YYYY-MM-DD (its Date ends in 2106 and starts in 1970) and
// timestamps as DuckDB writes them, YYYY-MM-DD HH:MM:SS with the fraction
// of a second to the microsecond and no trailing zeros (its DateTime has
// whole seconds only). Both sort and compare as text in time order.
// Booleans are UInt8. No statement uses an alias, so a column named like
// an alias can never be confused with one.

const chRowKey = "__row"

// chType is the ClickHouse column type for a DuckDB column type.
func chType(catalogType, sqlType string) string {
	switch catalogType {
	case typing.TypeInteger:
		return "Nullable(Int64)"
	case typing.TypeDecimal:
		p, s := catalog.DecimalParts(sqlType)
		return "Nullable(Decimal(" + strconv.Itoa(p) + ", " + strconv.Itoa(s) + "))"
	case typing.TypeDouble:
		return "Nullable(Float64)"
	case typing.TypeBoolean:
		return "Nullable(UInt8)"
	}
	return "Nullable(String)"
}

// duckType is the DuckDB column type for a ClickHouse column holding a
// column of catalogType.
func duckType(catalogType, chType string) string {
	p, s := catalog.DecimalParts(chType)
	return catalog.SQLTypeOf(catalogType, "DECIMAL("+strconv.Itoa(p)+","+strconv.Itoa(s)+")")
}

// chTable names the Distributed table of t; chLocal its part on a shard.
func (c *Cluster) chTable(t *catalog.Table) string {
	return chIdent(c.cfg.Database) + "." + chIdent(t.ID)
}

func (c *Cluster) chLocal(t *catalog.Table) string {
	return chIdent(c.cfg.Database) + "." + chIdent(t.ID+"_local")
}

// chNumber writes a float as a ClickHouse Float64 literal.
func chNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return "toFloat64(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
}

// chOperand returns how a column and a checked value compare, matching
// operand: numbers as Float64, text in lower case.
func chOperand(c *catalog.Column, v any) (lhs, rhs string) {
	col := chCol(c.Key)
	switch c.Type {
	case typing.TypeInteger, typing.TypeDecimal, typing.TypeDouble:
		return "toFloat64(" + col + ")", chNumber(v.(float64))
	case typing.TypeDate:
		return col, chLiteral(v.(string))
	case typing.TypeTimestamp:
		return col, chLiteral(canonicalTimestamp(v.(string)))
	case typing.TypeTime:
		// Stored as DuckDB writes a TIME, which sorts in time order.
		return col, chLiteral(v.(string))
	case typing.TypeBoolean:
		if v.(bool) {
			return col, "1"
		}
		return col, "0"
	}
	return "lowerUTF8(" + col + ")", "lowerUTF8(" + chLiteral(v.(string)) + ")"
}

// canonicalTimestamp writes a checked timestamp filter value the way
// DuckDB writes a timestamp as text, as the cluster stores it.
func canonicalTimestamp(s string) string {
	for _, l := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.Format("2006-01-02 15:04:05")
		}
	}
	return s
}

// chText is a column as DuckDB's CAST(... AS VARCHAR) writes it, for
// contains.
func chText(c *catalog.Column) string {
	col := chCol(c.Key)
	switch c.Type {
	case typing.TypeDecimal:
		// As written: no zeros padding the column's scale.
		return "replaceRegexpOne(toString(" + col + "), '[.]0*$|([.][0-9]*[1-9])0+$', '\\\\1')"
	case typing.TypeInteger, typing.TypeDouble:
		return "toString(" + col + ")"
	case typing.TypeBoolean:
		return "if(isNull(" + col + "), NULL, if(" + col + " = 1, 'true', 'false'))"
	}
	return col
}

// chCond compiles one checked condition, with DuckDB's semantics, by its
// op's entry in chConds.
func chCond(cond catalog.Cond) string {
	c := chCondSQL{Cond: cond, col: chCol(cond.Col.Key)}
	c.operand = func(v any) (string, string) { return chOperand(&cond.Col, v) }
	if cond.AsNumber {
		// A text column's values of catalog.NumberPattern's form as
		// Float64, the others NULL, as DuckDB's store reads them.
		c.col = "if(match(ifNull(" + c.col + ", ''), " + chLiteral("^"+catalog.NumberPattern+"$") + "), toFloat64OrNull(" + c.col + "), NULL)"
		c.operand = func(v any) (string, string) { return c.col, chNumber(v.(float64)) }
	}
	sql, ok := chConds[cond.Op]
	if !ok {
		return "" // an op without SQL here: TestOpTableComplete
	}
	return sql(c)
}

// chTrim trims the characters typing.SpaceChars names from both ends
// of a text, as the DuckDB store's trim does.
func chTrim(col string) string {
	return "replaceRegexpAll(" + col + ", '^[ \\t\\n\\v\\f\\r]+|[ \\t\\n\\v\\f\\r]+$', '')"
}

// chWhere compiles conditions and a search to a WHERE clause, "" for none.
func chWhere(conds []catalog.Cond, search *catalog.Search) string {
	var terms []string
	for _, c := range conds {
		terms = append(terms, chCond(c))
	}
	if search != nil {
		var any []string
		for _, c := range search.Cols {
			any = append(any, "position(lowerUTF8("+chCol(c.Key)+"), lowerUTF8("+chLiteral(search.Text)+")) > 0")
		}
		terms = append(terms, "("+strings.Join(any, " OR ")+")")
	}
	if len(terms) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(terms, " AND ")
}

// chAgg compiles an aggregate, the measure of its op.
func chAgg(a catalog.Agg) string {
	return chMeasureAggregate(catalog.MeasureTerm{Name: a.Name, Op: a.Op, Col: a.Col})
}

// chSelect is a plan's result in ClickHouse terms, before paging.
type chSelect struct {
	sel   []string // output columns: group keys and aggregates, or row columns
	from  string   // FROM and WHERE
	where string
	group string   // GROUP BY, if grouped
	order []string // ORDER BY terms of the whole result
	aggs  []string // ungrouped aggregates
}

func (c *Cluster) chSelect(p *catalog.Plan) (*chSelect, error) {
	where := chWhere(p.Conds, p.Search)
	q := &chSelect{from: " FROM " + c.chTable(p.Table) + where, where: where}
	dir := "ASC"
	if p.Sort != nil && p.Sort.Desc {
		dir = "DESC"
	}
	if p.Grouped() {
		var keys []string
		for _, g := range p.Groups {
			keys = append(keys, chCol(g.Key))
		}
		q.sel = append(q.sel, keys...)
		for _, a := range p.Aggs {
			q.sel = append(q.sel, chAgg(a))
		}
		q.group = " GROUP BY " + strings.Join(keys, ", ")
		term := func(i int, dir string) string {
			if i < len(p.Groups) && p.Groups[i].Natural() {
				return chNaturalOrder(q.sel[i], dir)
			}
			return chOrder(q.sel[i], chDecimal(&p.Outputs, i), dir)
		}
		if p.Sort != nil {
			q.order = append(q.order, term(p.Sort.Out, dir))
		}
		for i := range keys {
			q.order = append(q.order, term(i, "ASC"))
		}
		return q, nil
	}
	for _, a := range p.Aggs {
		q.aggs = append(q.aggs, chAgg(a))
	}
	for _, rc := range p.Cols {
		q.sel = append(q.sel, chCol(rc.Key))
	}
	if p.Sort != nil {
		if p.Sort.Col.Natural() {
			q.order = append(q.order, chNaturalOrder(chCol(p.Sort.Col.Key), dir))
		} else {
			q.order = append(q.order, chOrder(chCol(p.Sort.Col.Key), p.Sort.Col.Type == typing.TypeDecimal, dir))
		}
	}
	q.order = append(q.order, chRowKey+" ASC")
	return q, nil
}

// whole is the statement of the whole result in order, unpaged.
func (q *chSelect) whole() string {
	return "SELECT " + strings.Join(q.sel, ", ") + q.from + q.group + " ORDER BY " + strings.Join(q.order, ", ")
}

// chStatements compiles a plan into two statements: one row of counts
// (matched rows, then the groups and those with an empty group column, or
// the aggregates) and the page, if any.
func (c *Cluster) chStatements(p *catalog.Plan) (counts, page string, err error) {
	q, err := c.chSelect(p)
	if err != nil {
		return "", "", err
	}
	limit := " LIMIT " + strconv.Itoa(p.Offset) + ", " + strconv.Itoa(p.Limit)
	if p.Grouped() {
		counts = "SELECT (SELECT count()" + q.from + "), count(), countIf(" + chAnyNull(p.Groups) + ")"
		if p.GroupBounds() {
			counts += ", " + chBound(p.Groups[0], "min") + ", " + chBound(p.Groups[0], "max")
		}
		counts += " FROM (SELECT " + chGroupKeys(p.Groups) + q.from + q.group + ")"
		return counts, q.whole() + limit, nil
	}
	counts = "SELECT " + strings.Join(append([]string{"count()"}, q.aggs...), ", ") + q.from
	if p.Limit == 0 {
		return counts, "", nil
	}
	if q.where == "" && p.Sort == nil {
		// Row numbers are positions: the page is a range of them.
		return counts, "SELECT " + strings.Join(q.sel, ", ") + " FROM " + c.chTable(p.Table) + " WHERE " + chRowKey + " >= " +
			strconv.Itoa(p.Offset) + " AND " + chRowKey + " < " + strconv.Itoa(p.Offset+p.Limit) + " ORDER BY " + chRowKey, nil
	}
	return counts, q.whole() + limit, nil
}

// chOrder is an ORDER BY term with NULLS LAST. ClickHouse 18.16 sorts
// Decimals many times slower than Float64, so a decimal sorts first by its
// Float64 value and then, among equal floats only, exactly.
// chNaturalOrder is a natural column's order terms, as DuckDB's (the
// engine's duckOrder): values of digits alone by their number, before
// other values ascending, then as text.
func chNaturalOrder(expr, dir string) string {
	keys := chNaturalKeys(expr)
	keys[0] = "if(isNull(" + expr + "), NULL, " + keys[0] + ")"
	for i, k := range keys {
		keys[i] = k + " " + dir + " NULLS LAST"
	}
	return strings.Join(keys, ", ")
}

// chNaturalKeys are the keys a natural column orders by, none of them
// Nullable: ClickHouse 18.16 compares tuples of them in argMin.
func chNaturalKeys(expr string) []string {
	v := "ifNull(" + expr + ", '')"
	digits := "match(" + v + ", '^[0-9]+$')"
	trimmed := "replaceRegexpOne(" + v + ", '^0+', '')"
	return []string{"if(" + digits + ", 0, 1)", "if(" + digits + ", length(" + trimmed + "), 0)", "if(" + digits + ", " + trimmed + ", " + v + ")", v}
}

func chOrder(expr string, decimal bool, dir string) string {
	if decimal {
		return "toFloat64(" + expr + ") " + dir + " NULLS LAST, " + expr + " " + dir + " NULLS LAST"
	}
	return expr + " " + dir + " NULLS LAST"
}

// chBound is the least (op min) or greatest (max) of a group column
// over the groups, in the column's order, NULL for none: a grouped
// plan's Bounds, as the analysis finds a column's min and max.
func chBound(g catalog.Column, op string) string {
	col := chCol(g.Key)
	if g.Natural() {
		f := map[string]string{"min": "argMinIf", "max": "argMaxIf"}[op]
		return "if(count(" + col + ") = 0, NULL, " + f + "(" + col + ", tuple(" + strings.Join(chNaturalKeys(col), ", ") + "), isNotNull(" + col + ")))"
	}
	return "if(count(" + col + ") = 0, NULL, " + op + "(" + col + "))"
}

// chGroupKeys are the group columns, quoted.
func chGroupKeys(groups []catalog.Column) string {
	keys := make([]string, len(groups))
	for i, g := range groups {
		keys[i] = chCol(g.Key)
	}
	return strings.Join(keys, ", ")
}

// chAnyNull is the condition that one of the group columns is NULL.
func chAnyNull(groups []catalog.Column) string {
	terms := make([]string, len(groups))
	for i, g := range groups {
		terms[i] = "isNull(" + chCol(g.Key) + ")"
	}
	return strings.Join(terms, " OR ")
}
