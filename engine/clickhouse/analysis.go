package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"datadesk"
	"datadesk/engine/catalog"
)

// An analysis on the cluster is answered in a few statements, as
// ClickHouse 18.16 has no window functions to count beside the page: the
// matched rows and the totals shares divide by; the groups and the empty
// ones; and the page. The page is stages of SELECTs over the one before,
// as DuckDB's: the groups and their aggregates, each measure's value,
// shares, computed measures, the measures over the groups
// (analysis_over.go), having, and top per group (LIMIT BY, or ranks
// when ties are kept). Internal columns are named __g<i>, __a<i>, __v<i>
// and __k<i>, which no column key can be (keys never start with _).
// Exact percentiles interpolate over the sorted values as DuckDB's
// quantile_cont does.

// chWeekFirst and chWeekLast bound the dates ClickHouse's Date holds
// whole weeks of, for week buckets.
const (
	chWeekFirst = "1970-01-05"
	chWeekLast  = "2105-12-31"
)

// Analyze answers a checked analysis with the semantics of the DuckDB
// store's. Errors: invalid (a lookup key that repeats; a week outside
// the dates ClickHouse holds), timeout, unavailable.
func (c *Cluster) Analyze(ctx context.Context, p *catalog.AnalysisPlan) (*catalog.AnalysisResult, error) {
	if err := c.checkAnalysis(ctx, p); err != nil {
		return nil, err
	}
	a := &chAnalysis{c: c, p: p}
	if slices.ContainsFunc(p.Measures, catalog.MeasureTerm.Window) || p.Top != nil && !p.Top.Cut {
		var err error
		if a.windowFns, err = c.WindowFunctions(ctx); err != nil {
			return nil, err
		}
	}
	res := &catalog.AnalysisResult{FileID: p.Table.FileID, TableID: p.Table.ID, SourceRowCount: p.Table.RowCount, Offset: p.Offset}
	totals := a.totals()
	if err := catalog.CheckCompiled(totals); err != nil {
		return nil, err
	}
	head, err := c.all(ctx, totals)
	if err != nil {
		return nil, err
	}
	res.MatchedRowCount, res.SQL = head[0][0].(int64), totals
	a.shareTotals = head[0][1:]
	rows, err := a.rows(ctx, res)
	if err != nil {
		return nil, err
	}
	page := a.page(rows)
	if err := catalog.CheckCompiled(page); err != nil {
		return nil, err
	}
	res.SQL += ";\n" + page
	if p.Grouped() {
		counts := "SELECT count(), countIf(" + a.anyEmpty() + ") FROM (" + rows + ")"
		res.SQL += ";\n" + counts
		head, err := c.all(ctx, counts)
		if err != nil {
			return nil, err
		}
		groups := head[0][0].(int64)
		res.GroupCount, res.EmptyGroups = &groups, head[0][1].(int64)
	}
	out, err := c.all(ctx, page)
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		for i, v := range r {
			r[i] = chJSONValue(v, p.OutType(i))
		}
	}
	res.Rows = out
	res.Finish(p)
	return res, nil
}

// rows is the statement of the analysis's rows in full, before the
// page: the groups with every measure, having and top. With windows all
// it sets the matched rows to those of the buckets kept; with top, the
// groups tied with the n-th past it.
func (a *chAnalysis) rows(ctx context.Context, res *catalog.AnalysisResult) (string, error) {
	p := a.p
	q, err := a.overGroups(ctx, a.groups())
	if err != nil {
		return "", err
	}
	if p.WindowsAll() {
		n, stmt, err := a.matched(ctx, q)
		if err != nil {
			return "", err
		}
		res.MatchedRowCount, res.SQL = n, res.SQL+";\n"+stmt
	}
	q = a.having(q)
	if p.Top == nil {
		return q, nil
	}
	tied := a.tied(q)
	head, err := a.c.all(ctx, tied)
	if err != nil {
		return "", err
	}
	res.Tied, res.SQL = head[0][0].(int64), res.SQL+";\n"+tied
	if !p.Top.Cut {
		return a.topKept(q), nil
	}
	return a.topCut(q), nil
}

// checkAnalysis refuses what the cluster cannot answer as DuckDB would:
// a lookup table whose key repeats, and week buckets of dates outside
// ClickHouse's Date.
func (c *Cluster) checkAnalysis(ctx context.Context, p *catalog.AnalysisPlan) error {
	if l := p.Lookup; l != nil {
		var keys, notNull []string
		for _, k := range l.On {
			keys = append(keys, chCol(k.Lookup.Key))
			notNull = append(notNull, chCol(k.Lookup.Key)+" IS NOT NULL")
		}
		head, err := c.all(ctx, "SELECT count(), toString(min("+keys[0]+")) FROM (SELECT "+strings.Join(keys, ", ")+" FROM "+
			c.chTable(l.Table)+" WHERE "+strings.Join(notNull, " AND ")+" GROUP BY "+strings.Join(keys, ", ")+" HAVING count() > 1)")
		if err != nil {
			return err
		}
		if n := head[0][0].(int64); n > 0 {
			return datadesk.Errorf(datadesk.Invalid, "%d keys repeat in lookup table %s (%q is one); a lookup needs each key once",
				n, l.Table.ID, head[0][1]).WithField("lookup.on")
		}
	}
	for i, g := range p.Groups {
		if g.Bucket != "week" {
			continue
		}
		col := chCol(g.Col.Key)
		day := "substring(" + col + ", 1, 10)"
		head, err := c.all(ctx, "SELECT count() FROM (SELECT "+col+" FROM"+(&chAnalysis{c: c, p: p}).from()+") WHERE "+
			day+" < "+chLiteral(chWeekFirst)+" OR "+day+" > "+chLiteral(chWeekLast))
		if err != nil {
			return err
		}
		if n := head[0][0].(int64); n > 0 {
			return datadesk.Errorf(datadesk.Invalid, "%d values of %s fall outside %s to %s, the weeks a table on the ClickHouse cluster "+
				"groups by; group by day or month, or move the table to duckdb", n, g.Col.Key, chWeekFirst, chWeekLast).
				WithField(fmt.Sprintf("group_by[%d]", i))
		}
	}
	return nil
}

// chAnalysis compiles one analysis; shareTotals are the totals shares
// divide by, read by the first statement.
type chAnalysis struct {
	c           *Cluster
	p           *catalog.AnalysisPlan
	shareTotals []any
	// windowFns: the servers have window functions. cols are the columns
	// of the stage ClickHouse 18.16's measures over the groups read.
	windowFns bool
	cols      []stageCol
}

func chInternal(kind string, i int) string { return "`__" + kind + strconv.Itoa(i) + "`" }

// from is the FROM of an analysis: the table, or the table with the
// lookup columns it reads joined many to one, named "lookup.key". Keys compare as text, with
// an empty key matching nothing, as SQL's = does.
func (a *chAnalysis) from() string {
	p := a.p
	if p.Lookup == nil {
		return " " + a.c.chTable(p.Table)
	}
	var left, right, using []string
	for i, k := range p.Lookup.On {
		left = append(left, chJoinKey(&k.Col, k.Lookup.Type, "L")+" AS "+chInternal("k", i))
		right = append(right, chJoinKey(&k.Lookup, k.Col.Type, "R")+" AS "+chInternal("k", i))
		using = append(using, chInternal("k", i))
	}
	for _, col := range p.Lookup.Cols {
		right = append(right, chCol(col.Key)+" AS "+chCol(catalog.LookupPrefix+col.Key))
	}
	// Current servers want the joined subqueries named.
	return " (SELECT * FROM (SELECT *, " + strings.Join(left, ", ") + " FROM " + a.c.chTable(p.Table) + ") AS __m ANY LEFT JOIN (SELECT " +
		strings.Join(right, ", ") + " FROM " + a.c.chTable(p.Lookup.Table) + ") AS __l USING " + strings.Join(using, ", ") + ")"
}

// chJoinKey is a key column as text to join on: numbers by value, an
// empty key as a mark of its side that the other never has.
func chJoinKey(c *catalog.Column, other, side string) string {
	v := chCol(c.Key)
	if catalog.Numeric(c.Type) && c.Type != other {
		v = "toFloat64(" + v + ")"
	}
	return "ifNull(toString(" + v + "), '\\0" + side + "')"
}

// where is the WHERE of the filters, "" for none.
func (a *chAnalysis) where() string {
	if a.p.Where == nil {
		return ""
	}
	return " WHERE " + chBool(a.p.Where)
}

// chBool compiles a filter tree.
func chBool(b *catalog.Bool) string {
	var terms []string
	for _, c := range b.Conds {
		terms = append(terms, chCond(c))
	}
	for _, k := range b.Kids {
		terms = append(terms, chBool(k))
	}
	join := " AND "
	if b.Or {
		join = " OR "
	}
	return "(" + strings.Join(terms, join) + ")"
}

// totals counts the matched rows and the total of each share measure.
func (a *chAnalysis) totals() string {
	sel := []string{"count()"}
	for _, m := range a.p.Measures {
		if m.OfTotal() {
			sel = append(sel, "toFloat64("+chMeasureAggregate(m)+")")
		}
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM" + a.from() + a.where()
}

// chBucket is group g's value: a date as text cut to its bucket's first
// day, a timestamp to its hour.
func chBucket(g catalog.GroupTerm) string {
	col := chCol(g.Col.Key)
	day := "substring(" + col + ", 1, 10)"
	switch g.Bucket {
	case "":
		return col
	case "year":
		return "concat(substring(" + col + ", 1, 4), '-01-01')"
	case "quarter":
		return "concat(substring(" + col + ", 1, 5), arrayElement(['01', '04', '07', '10'], intDiv(toUInt8OrZero(substring(" + col +
			", 6, 2)) - 1, 3) + 1), '-01')"
	case "month":
		return "concat(substring(" + col + ", 1, 7), '-01')"
	case "week":
		// OrZero: ClickHouse computes a function over an empty cell's
		// placeholder too, then drops the result.
		return "toString(toMonday(toDateOrZero(" + day + ")))"
	case "hour":
		return "concat(substring(" + col + ", 1, 13), ':00:00')"
	}
	return day
}

// chMeasureAggregate is measure m's aggregate over the rows, "" for a
// measure computed after them.
func chMeasureAggregate(m catalog.MeasureTerm) string {
	sql := chMeasures[m.Op].agg
	if sql == nil {
		return ""
	}
	col := ""
	if m.Col != nil {
		col = chCol(m.Col.Key)
	}
	return sql(m, col)
}

// chQuantile interpolates quantile q of sorted values as DuckDB's
// quantile_cont does: lo + (hi - lo) * (pos - floor(pos)).
func chQuantile(sorted string, q float64) string {
	pos := "((length(" + sorted + ") - 1) * " + chNumber(q) + ")"
	lo := "arrayElement(" + sorted + ", toUInt64(floor(" + pos + ")) + 1)"
	hi := "arrayElement(" + sorted + ", toUInt64(ceil(" + pos + ")) + 1)"
	return "if(length(" + sorted + ") = 0, NULL, " + lo + " + (" + hi + " - " + lo + ") * (" + pos + " - floor(" + pos + ")))"
}

// chExpr compiles an expression over the measures' values.
func chExpr(e *catalog.Expr) string {
	switch e.Op {
	case '#':
		return chNumber(e.Num)
	case '$':
		return "toFloat64(" + chInternal("v", e.Ref) + ")"
	case '~':
		return "(-" + chExpr(e.L) + ")"
	case '/':
		return "(" + chExpr(e.L) + " / nullIf(" + chExpr(e.R) + ", 0))"
	}
	return "(" + chExpr(e.L) + " " + string(e.Op) + " " + chExpr(e.R) + ")"
}

// topCut keeps exactly top's n first groups per combination of its per
// groups, ties broken by the groups' values, as DuckDB's row_number does.
func (a *chAnalysis) topCut(q string) string {
	p, t := a.p, a.p.Top
	order := []string{chOrder(chInternal("v", t.By), a.decimal(len(p.Groups)+t.By), chDir(t.Desc))}
	for i := range p.Groups {
		order = append(order, a.order(i, "ASC"))
	}
	var per []string
	for _, g := range t.Per {
		per = append(per, chInternal("g", g))
	}
	return "SELECT * FROM (" + q + ") ORDER BY " + strings.Join(order, ", ") + " LIMIT " + strconv.Itoa(t.N) + " BY " + strings.Join(per, ", ")
}

// tied is the statement counting the groups past top's n-th tied with
// it. ClickHouse 18.16 has no rank(), and its arrays of decimals crash
// it: per combination of the per groups, the values top ranks by as
// doubles (equal decimals stay equal), sorted; with n of them or more,
// those up to the last equal to the n-th, less n; with fewer, the empty
// ones past n.
func (a *chAnalysis) tied(q string) string {
	t := a.p.Top
	n := strconv.Itoa(t.N)
	var per []string
	for _, g := range t.Per {
		per = append(per, chInternal("g", g))
	}
	sorted := "arraySort(groupArray(toFloat64(" + chInternal("v", t.By) + ")))"
	if t.Desc {
		sorted = "arrayReverseSort(groupArray(toFloat64(" + chInternal("v", t.By) + ")))"
	}
	return "SELECT toInt64(sum(if(__nv >= " + n + ", toInt64(__nv) - toInt64(indexOf(arrayReverse(__sorted), __cut)) + 1 - " + n +
		", greatest(toInt64(__c) - " + n + ", 0)))) FROM (SELECT " + sorted + " AS __sorted, length(__sorted) AS __nv, arrayElement(__sorted, " + n +
		") AS __cut, count() AS __c FROM (" + q + ") GROUP BY " + strings.Join(per, ", ") + ")"
}

// groups is the analysis's groups with their measures, before those
// over the groups; __n is each group's rows.
func (a *chAnalysis) groups() string {
	p := a.p
	var sel, keys []string
	for i, g := range p.Groups {
		sel = append(sel, chBucket(g)+" AS "+chInternal("g", i))
		keys = append(keys, chInternal("g", i))
	}
	for i, m := range p.Measures {
		if agg := chMeasureAggregate(m); agg != "" {
			sel = append(sel, agg+" AS "+chInternal("a", i))
		}
	}
	sel = append(sel, "count() AS __n")
	q := "SELECT " + strings.Join(sel, ", ") + " FROM" + a.from() + a.where()
	if p.Grouped() {
		q += " GROUP BY " + strings.Join(keys, ", ")
	}
	stage := func(cols []string) {
		if len(cols) > 0 {
			q = "SELECT *, " + strings.Join(cols, ", ") + " FROM (" + q + ")"
		}
	}
	var values, expr []string
	share := 0
	for i, m := range p.Measures {
		v, agg := chInternal("v", i), chInternal("a", i)
		switch value := chMeasures[m.Op].value; {
		case m.Window():
			// In the stages over the groups, later.
		case m.Op == "expr":
			expr = append(expr, chExpr(m.Expr)+" AS "+v)
		case m.OfTotal():
			total := "NULL"
			if f, ok := a.shareTotals[share].(float64); ok {
				total = chNumber(f)
			}
			share++
			values = append(values, value(m, agg, total)+" AS "+v)
		case value != nil:
			values = append(values, value(m, agg, "")+" AS "+v)
		default:
			values = append(values, agg+" AS "+v)
		}
	}
	stage(values)
	for _, level := range p.ExprLevels() {
		var cols []string
		for _, i := range level {
			cols = append(cols, chExpr(p.Measures[i].Expr)+" AS "+chInternal("v", i))
		}
		stage(cols)
	}
	return q
}

// having keeps the groups having's conditions on their measures keep.
func (a *chAnalysis) having(q string) string {
	p := a.p
	if len(p.Having) == 0 {
		return q
	}
	var terms []string
	for _, h := range p.Having {
		col := catalog.Column{Key: "__v" + strconv.Itoa(h.Measure), Type: p.Measures[h.Measure].Type}
		terms = append(terms, chCond(catalog.Cond{Col: col, Op: h.Op, Values: h.Values, Null: h.Null}))
	}
	return "SELECT * FROM (" + q + ") WHERE " + strings.Join(terms, " AND ")
}

// decimal reports whether output column i is a Decimal on the cluster.
func (a *chAnalysis) decimal(i int) bool { return chDecimal(&a.p.Outputs, i) }

func chDir(desc bool) string {
	if desc {
		return "DESC"
	}
	return "ASC"
}

// outCol is output column i's internal column.
// order is output column i's order terms in direction dir: natural for a
// group of an identifier column, as on DuckDB.
func (a *chAnalysis) order(i int, dir string) string {
	if i < len(a.p.Groups) && a.p.Groups[i].Bucket == "" && a.p.Groups[i].Col.Natural() {
		return chNaturalOrder(a.outCol(i), dir)
	}
	return chOrder(a.outCol(i), a.decimal(i), dir)
}

func (a *chAnalysis) outCol(i int) string {
	if i < len(a.p.Groups) {
		return chInternal("g", i)
	}
	return chInternal("v", i-len(a.p.Groups))
}

// anyEmpty is the condition that a group column is empty.
func (a *chAnalysis) anyEmpty() string {
	if !a.p.Grouped() {
		return "0"
	}
	var terms []string
	for i := range a.p.Groups {
		terms = append(terms, "isNull("+chInternal("g", i)+")")
	}
	return strings.Join(terms, " OR ")
}

// page is the statement of the answer's rows, in order.
func (a *chAnalysis) page(rows string) string {
	p := a.p
	var sel, order []string
	for i := range len(p.Groups) + len(p.Measures) {
		sel = append(sel, a.outCol(i))
	}
	for _, s := range p.Sort {
		order = append(order, a.order(s.Out, chDir(s.Desc)))
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM (" + rows + ")"
	if len(order) > 0 {
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	if p.Grouped() {
		q += " LIMIT " + strconv.Itoa(p.Offset) + ", " + strconv.Itoa(p.Limit)
	}
	return q
}
