package ducksql

import (
	"slices"
	"strconv"
	"strings"

	"datadesk/engine/catalog"
)

// An analysis is one statement of stages, each a SELECT over the one
// before, which DuckDB inlines: the groups and their aggregates (g),
// shares of the total with the computed measures of plain aggregates
// (s), the other computed measures (e), measures over the groups (w),
// having (h), top per group (t, numbered and ranked in one SELECT and
// kept by the WHERE of the SELECT around it), and the page. The counts
// (rows matched, groups, empty groups) join the last of g to w; for
// final groups the page's SELECT computes that last stage itself.
// Internal columns: "g<i>" groups, "v<i>" each measure's value (a plain
// aggregate's where it is computed), "a<i>" the aggregate a share
// divides, "__n" each group's rows, "__top" and "__rank" a group's
// number and rank within top's.

// analysisCol names internal column kind+i.
func analysisCol(kind string, i int) string { return `"` + kind + strconv.Itoa(i) + `"` }

// analysisFrom is the FROM of an analysis: the table, or the table
// with the lookup columns it uses joined as "lookup.key".
func analysisFrom(p *catalog.AnalysisPlan) string {
	from := "data." + Ident(p.Table.ID)
	if p.Lookup == nil {
		return " FROM " + from
	}
	var b strings.Builder
	b.WriteString(" FROM (SELECT m.*")
	for _, c := range p.Lookup.Cols {
		b.WriteString(", l." + Ident(c.Key) + " AS " + Ident(catalog.LookupPrefix+c.Key))
	}
	b.WriteString(" FROM " + from + " AS m LEFT JOIN data." + Ident(p.Lookup.Table.ID) + " AS l ON ")
	for i, k := range p.Lookup.On {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString("m." + Ident(k.Col.Key) + " = l." + Ident(k.Lookup.Key))
	}
	b.WriteString(") AS src")
	return b.String()
}

// boolean compiles a filter tree.
func boolean(b *catalog.Bool) (string, []any) {
	var terms []string
	var params []any
	for _, c := range b.Conds {
		sql, ps := condition(c)
		terms = append(terms, sql)
		params = append(params, ps...)
	}
	for _, k := range b.Kids {
		sql, ps := boolean(k)
		terms = append(terms, sql)
		params = append(params, ps...)
	}
	join := " AND "
	if b.Or {
		join = " OR "
	}
	return "(" + strings.Join(terms, join) + ")", params
}

// bucket is group g's value.
func bucket(g catalog.GroupTerm) string {
	col := Ident(g.Col.Key)
	switch g.Bucket {
	case "":
		return col
	case "hour":
		return "date_trunc('hour', " + col + ")"
	}
	return "CAST(date_trunc('" + g.Bucket + "', " + col + ") AS DATE)"
}

// aggregate is measure m's aggregate, or "" for a measure computed
// after the groups.
func aggregate(m catalog.MeasureTerm) string {
	sql := measures[m.Op].agg
	if sql == nil {
		return ""
	}
	col := ""
	if m.Col != nil {
		col = Ident(m.Col.Key)
	}
	return sql(m, col)
}

// expr compiles an expression over the measures' values.
func expr(e *catalog.Expr) string {
	switch e.Op {
	case '#':
		return strconv.FormatFloat(e.Num, 'g', -1, 64) + "::DOUBLE"
	case '$':
		return "CAST(" + analysisCol("v", e.Ref) + " AS DOUBLE)"
	case '~':
		return "(-" + expr(e.L) + ")"
	}
	return "(" + expr(e.L) + " " + string(e.Op) + " " + expr(e.R) + ")"
}

func partition(cols []string) string {
	if len(cols) == 0 {
		return ""
	}
	return "PARTITION BY " + strings.Join(cols, ", ") + " "
}

// analysisRows is an analysis's rows in full, with the internal
// columns, before the page: the stages up to top, and the condition that
// keeps top's groups ("" without top), a WHERE of the SELECT around them
// (fromRows), whose windows and aggregates count what it keeps.
func analysisRows(p *catalog.AnalysisPlan) (q, keep string, params []any) {
	q, params = analysisGroups(p, nil)
	if len(p.Having) > 0 {
		var terms []string
		for _, h := range p.Having {
			sql, ps := having(p, h)
			terms = append(terms, sql)
			params = append(params, ps...)
		}
		q = "SELECT * FROM (" + q + ") WHERE " + strings.Join(terms, " AND ")
	}
	if t := p.Top; t != nil {
		q, keep = top(p, t, q)
	}
	return q, keep, params
}

// fromRows is the FROM of a SELECT around analysisRows' rows, with its
// condition.
func fromRows(rows, keep string) string {
	if keep == "" {
		return " FROM (" + rows + ")"
	}
	return " FROM (" + rows + ") WHERE " + keep
}

// top numbers and ranks the groups per combination of the per groups, in
// one SELECT, and keeps the first n of each, with every group tied with
// the n-th unless the plan cuts ties. Kept ties, the number is in the
// rank's own order (DuckDB sorts once, and which of the tied groups
// comes first does not change how many are past the n-th); cut, it is
// in the answer's order, and the groups past the n-th tied with it are
// counted in a SELECT around it before they are dropped. Without a
// having, the rows matched are counted there too rather than in a stage
// of their own (matchedAtTop). The groups past the n-th tied with it,
// kept or not, are counted where the rows are read (topTied).
func top(p *catalog.AnalysisPlan, t *catalog.TopTerm, q string) (rows, keep string) {
	var part []string
	for _, g := range t.Per {
		part = append(part, analysisCol("g", g))
	}
	by := analysisCol("v", t.By) + " " + direction(t.Desc) + " NULLS LAST"
	n := strconv.Itoa(t.N)
	ranked := partition(part) + "ORDER BY " + by
	numbered := ranked
	if t.Cut {
		for i := range p.Groups {
			numbered += ", " + Order(analysisCol("g", i), outOrdering(p, i), "ASC")
		}
	}
	cols := []string{`row_number() OVER (` + numbered + `) AS "__top"`, `rank() OVER (` + ranked + `) AS "__rank"`}
	if matchedAtTop(p) {
		cols = append(cols, matchedCol)
	}
	rows = `SELECT *, ` + strings.Join(cols, ", ") + ` FROM (` + q + `)`
	if t.Cut {
		// The tied groups are dropped: counted before.
		return `SELECT *, CAST(count(*) FILTER (WHERE "__top" > ` + n + ` AND "__rank" <= ` + n + `) OVER () AS BIGINT) AS "__tied" FROM (` +
			rows + `)`, `"__top" <= ` + n
	}
	return rows, `"__rank" <= ` + n
}

// topTied counts the groups past the n-th tied with it over top's rows,
// as a window over them or an aggregate of them. Kept, they are the rows
// past the n-th; cut, they were counted before the rows were dropped, in
// the column "__tied".
func topTied(t *catalog.TopTerm, window bool) string {
	n := strconv.Itoa(t.N)
	switch {
	case t.Cut && window:
		return `"__tied"`
	case t.Cut:
		return `coalesce(max("__tied"), 0)`
	case window:
		return `CAST(count(*) FILTER (WHERE "__top" > ` + n + `) OVER () AS BIGINT) AS "__tied"`
	}
	return `count(*) FILTER (WHERE "__top" > ` + n + `)`
}

// matchedCol counts the rows matched, over the groups.
const matchedCol = `CAST(sum("__n") OVER () AS BIGINT) AS "__matched"`

// matchedAtTop reports whether the rows matched are counted in top's
// window: no having drops groups before it.
func matchedAtTop(p *catalog.AnalysisPlan) bool {
	return p.Top != nil && len(p.Having) == 0 && !p.WindowsAll() && p.Grouped()
}

// withStage is q with a stage that adds cols to its columns.
func withStage(q string, cols []string) string {
	if len(cols) == 0 {
		return q
	}
	return "SELECT *, " + strings.Join(cols, ", ") + " FROM (" + q + ")"
}

// analysisGroups is an analysis's groups with their measures, before
// having and top: the groups of the filtered rows and their aggregates,
// the measures computed from them, the measures over the groups and,
// when those ran over every bucket, the filters on the series column.
// Given the columns of the SELECT around it (Analysis, for final
// groups), each it names that the last stage computes is computed there
// instead, a stage less for DuckDB to plan (about 0.1 ms a call); given
// none, every stage is here.
func analysisGroups(p *catalog.AnalysisPlan, outer []string) (string, []any) {
	var params []any
	where := ""
	if p.Where != nil {
		var ps []any
		where, ps = boolean(p.Where)
		where = " WHERE " + where
		params = append(params, ps...)
	}
	var sel, keys []string
	for i, g := range p.Groups {
		sel = append(sel, bucket(g)+" AS "+analysisCol("g", i))
		keys = append(keys, analysisCol("g", i))
	}
	// A plain aggregate is its measure's value at once; a share's
	// aggregate is what its value, in a stage of its own, divides.
	for i, m := range p.Measures {
		if a := aggregate(m); a != "" {
			name := analysisCol("v", i)
			if m.OfTotal() {
				name = analysisCol("a", i)
			}
			sel = append(sel, a+" AS "+name)
		}
	}
	sel = append(sel, `count(*) AS "__n"`)
	q := "SELECT " + strings.Join(sel, ", ") + analysisFrom(p) + where
	if p.Grouped() {
		q += " GROUP BY " + strings.Join(keys, ", ")
	}
	// Each measure's value, stage by stage: aggregates, shares, then
	// expressions (which may read shares), then measures over the groups.
	// Each stage is a statement around the last, which DuckDB plans anew
	// (about 0.05 to 0.1 ms a stage), so a stage holds all it can.
	var last []string
	stage := func(cols []string) {
		if len(cols) > 0 {
			q, last = withStage(q, last), cols
		}
	}
	var share, window []string
	for i, m := range p.Measures {
		v := analysisCol("v", i)
		switch {
		case m.OfTotal():
			share = append(share, measures[m.Op].total(analysisCol("a", i))+" AS "+v)
		case m.Window():
			window = append(window, measures[m.Op].window(p, m)+" AS "+v)
		}
	}
	// The counts read the groups alone, which every stage keeps: they
	// join the last stage, with the group counts too when no having or top
	// drops groups later. Without groups the aggregation is one row, which
	// carries its counts itself: a window over it would cost DuckDB about
	// 0.2 ms a call.
	var counts []string
	switch {
	case p.WindowsAll(), matchedAtTop(p):
	case p.Grouped():
		counts = append(counts, matchedCol)
	default:
		counts = append(counts, `"__n" AS "__matched"`)
	}
	switch {
	case !groupsFinal(p):
	case p.Grouped():
		counts = append(counts, analysisGroupCounts(p)...)
	default:
		counts = append(counts, `CAST(1 AS BIGINT) AS "__groups"`, `0 AS "__empty"`)
	}
	// An expression may read another's value or a share: its stage comes
	// after them. The first level's expressions of plain aggregates alone
	// join the shares.
	var first []string
	levels := p.ExprLevels()
	if len(levels) > 0 {
		var later []int
		for _, i := range levels[0] {
			if readsShare(p, p.Measures[i].Expr) {
				later = append(later, i)
				continue
			}
			first = append(first, expr(p.Measures[i].Expr)+" AS "+analysisCol("v", i))
		}
		levels[0] = later
	}
	stage(append(first, share...))
	for _, level := range levels {
		var cols []string
		for _, i := range level {
			cols = append(cols, expr(p.Measures[i].Expr)+" AS "+analysisCol("v", i))
		}
		stage(cols)
	}
	stage(window)
	last = append(last, counts...)
	if p.WindowsAll() {
		// The buckets the filters on the series column keep, and the rows
		// of those buckets as the matched rows.
		var terms []string
		for _, c := range p.SeriesWhere {
			// The bucket compares with the filter's values as they were
			// given: a DATE bucket of a timestamp column with timestamps.
			c.Col = catalog.Column{Key: "g" + strconv.Itoa(p.Series), Type: c.Col.Type}
			sql, ps := condition(c)
			terms = append(terms, sql)
			params = append(params, ps...)
		}
		q, last = withStage(q, last), nil
		q = `SELECT *, ` + matchedCol + ` FROM (SELECT * FROM (` + q + ") WHERE " + strings.Join(terms, " AND ") + ")"
	}
	if !inline(outer, last) {
		q = withStage(q, last)
	}
	return q, params
}

// inline puts into outer, in place of each name, the column of cols of
// that name (every column a stage adds ends in its name: ` AS "v0"`), if
// outer names them all.
func inline(outer, cols []string) bool {
	at := make([]int, len(cols))
	for k, c := range cols {
		if at[k] = slices.Index(outer, c[strings.LastIndex(c, " AS ")+len(" AS "):]); at[k] < 0 {
			return false
		}
	}
	for k, c := range cols {
		outer[at[k]] = c
	}
	return true
}

// readsShare reports whether expression e reads a share of the total.
func readsShare(p *catalog.AnalysisPlan, e *catalog.Expr) bool {
	for _, r := range e.Refs() {
		if p.Measures[r].OfTotal() {
			return true
		}
	}
	return false
}

// groupsFinal reports whether the groups are final once aggregated: no
// having, top or filter on the buckets drops any.
func groupsFinal(p *catalog.AnalysisPlan) bool {
	return len(p.Having) == 0 && p.Top == nil && !p.WindowsAll()
}

// analysisGroupCounts are the columns "__groups" and "__empty": the groups,
// and those where a group column is empty.
func analysisGroupCounts(p *catalog.AnalysisPlan) []string {
	empty := `0 AS "__empty"`
	if p.Grouped() {
		var cols []string
		for i := range p.Groups {
			cols = append(cols, analysisCol("g", i))
		}
		empty = `CAST(sum(CASE WHEN ` + anyNull(cols) + ` THEN 1 ELSE 0 END) OVER () AS BIGINT) AS "__empty"`
	}
	return []string{`count(*) OVER () AS "__groups"`, empty}
}

// having compiles a condition on a measure's value.
func having(p *catalog.AnalysisPlan, h catalog.HavingCond) (string, []any) {
	col := catalog.Column{Key: "v" + strconv.Itoa(h.Measure), Type: p.Measures[h.Measure].Type}
	return condition(catalog.Cond{Col: col, Op: h.Op, Values: h.Values, Null: h.Null})
}

// analysisOrder is the result's order over the internal columns.
func analysisOrder(p *catalog.AnalysisPlan) string {
	var terms []string
	for _, s := range p.Sort {
		terms = append(terms, Order(outCol(p, s.Out), outOrdering(p, s.Out), direction(s.Desc)))
	}
	if len(terms) == 0 {
		return ""
	}
	return " ORDER BY " + strings.Join(terms, ", ")
}

// outOrdering is how output column i sorts: as its column does when it
// is a group, not bucketed, else as it is.
func outOrdering(p *catalog.AnalysisPlan, i int) catalog.Ordering {
	if i < len(p.Groups) && p.Groups[i].Bucket == "" {
		return p.Groups[i].Col.Ordering()
	}
	return catalog.ByText
}

// outCol is output column i's internal column.
func outCol(p *catalog.AnalysisPlan, i int) string {
	if i < len(p.Groups) {
		return analysisCol("g", i)
	}
	return analysisCol("v", i-len(p.Groups))
}

// Analysis is an analysis's statement: the page's rows, each with the
// matched count, the group count and how many groups have an empty group
// column.
func Analysis(p *catalog.AnalysisPlan) (string, []any) {
	var sel []string
	for i := range p.Groups {
		sel = append(sel, analysisCol("g", i))
	}
	for i := range p.Measures {
		sel = append(sel, analysisCol("v", i))
	}
	sel = append(sel, `"__matched"`)
	var rows, keep string
	var params []any
	if groupsFinal(p) {
		sel = append(sel, `"__groups"`, `"__empty"`)
		rows, params = analysisGroups(p, sel)
	} else {
		sel = append(sel, analysisGroupCounts(p)...)
		rows, keep, params = analysisRows(p)
	}
	if p.Top != nil {
		sel = append(sel, topTied(p.Top, true))
	}
	q := "SELECT " + strings.Join(sel, ", ") + fromRows(rows, keep) + analysisOrder(p)
	if p.Grouped() {
		q += limitOffset(p.Limit, p.Offset)
	}
	return q, params
}

// AnalysisCounts counts the matched rows, the groups and the empty
// groups of an analysis apart, for a page past the last group.
func AnalysisCounts(p *catalog.AnalysisPlan) (string, []any) {
	rows, keep, params := analysisRows(p)
	var empty []string
	for i := range p.Groups {
		empty = append(empty, analysisCol("g", i))
	}
	tied := "0"
	if p.Top != nil {
		tied = topTied(p.Top, false)
	}
	counts := `, count(*), count(*) FILTER (WHERE ` + anyNull(empty) + `), ` + tied + fromRows(rows, keep)
	if p.WindowsAll() {
		groups, gparams := analysisGroups(p, nil)
		return `SELECT (SELECT coalesce(max("__matched"), 0) FROM (` + groups + `))` + counts, append(gparams, params...)
	}
	matched, mparams := AnalysisMatched(p)
	return `SELECT (` + matched + `)` + counts, append(mparams, params...)
}

// AnalysisMatched counts the rows an analysis's filters keep, for an
// analysis whose measures are not over all rows (not WindowsAll).
func AnalysisMatched(p *catalog.AnalysisPlan) (string, []any) {
	where := ""
	var params []any
	if p.Where != nil {
		where, params = boolean(p.Where)
		where = " WHERE " + where
	}
	return `SELECT count(*)` + analysisFrom(p) + where, params
}

// AnalysisView is the statement of an analysis's whole result, in
// order, for a stored view: keys name its columns.
func AnalysisView(p *catalog.AnalysisPlan, keys []string) (string, []any) {
	rows, keep, params := analysisRows(p)
	sel := make([]string, len(keys))
	for i, k := range keys {
		sel[i] = outCol(p, i) + " AS " + Ident(k)
	}
	return "SELECT " + strings.Join(sel, ", ") + fromRows(rows, keep) + analysisOrder(p), params
}

// LookupRepeats counts the keys that repeat in an analysis's lookup
// table, and shows one of them.
func LookupRepeats(p *catalog.AnalysisPlan) string {
	var keys, notNull []string
	for _, k := range p.Lookup.On {
		keys = append(keys, Ident(k.Lookup.Key))
		notNull = append(notNull, Ident(k.Lookup.Key)+" IS NOT NULL")
	}
	return "SELECT count(*), CAST(min(" + keys[0] + ") AS VARCHAR) FROM (SELECT " + strings.Join(keys, ", ") + " FROM data." +
		Ident(p.Lookup.Table.ID) + " WHERE " + strings.Join(notNull, " AND ") + " GROUP BY " + strings.Join(keys, ", ") + " HAVING count(*) > 1)"
}
