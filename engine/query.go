package engine

import (
	"context"
	"fmt"
	"log/slog"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// Run executes a plan; when filters matched nothing, the answer's hint
// says how one may have missed. Errors: timeout when ctx ends first.
func (s *Store) Run(ctx context.Context, p *catalog.Plan) (*catalog.QueryResult, error) {
	return answer(ctx, s, "query", p.Table, p, len(p.Query.Filters) > 0,
		func(a answerer) func(context.Context, *catalog.Plan) (*catalog.QueryResult, error) { return a.run },
		catalog.NoMatchHint)
}

// answered is an answer as answer finishes it (catalog's results).
type answered interface {
	Outcome() (sql string, matched int64, hint *string)
}

// answer is Run's and Analyze's one path: plan p is answered where table
// t's rows are (by the answerer's way that how picks), the statement a
// remote backend ran is logged as what, and an answer whose filters
// matched nothing gets hint's word on how one may have missed.
func answer[P any, R answered](ctx context.Context, s *Store, what string, t *catalog.Table, p P, filtered bool,
	how func(answerer) func(context.Context, P) (R, error),
	hint func(context.Context, P, catalog.NearFunc, catalog.RunFunc) (string, error)) (R, error) {
	var none R
	a, err := s.answererOf(t)
	if err != nil {
		return none, err
	}
	res, err := how(a)(ctx, p)
	if err != nil {
		return none, err
	}
	sql, matched, h := res.Outcome()
	a.logRemote(what, t, sql)
	if matched == 0 && filtered {
		if *h, err = hint(ctx, p, a.near, a.run); err != nil {
			return none, err
		}
	}
	return res, nil
}

// CheckTextUses counts, in each table's DuckDB file or its backend, the
// values of the text columns a plan reads where numbers are meant
// (catalog.Plan.TextUses, catalog.AnalysisPlan.TextUses), refuses what
// text would answer wrongly and returns the notes of the rest
// (catalog.CheckTextUses). The tools ask it before they run a plan; the
// page's own browsing orders text as text. Errors: invalid, naming the
// argument; timeout.
func (s *Store) CheckTextUses(ctx context.Context, uses []catalog.TextUse) ([]string, error) {
	if len(uses) == 0 {
		return nil, nil
	}
	// A lookup table lives where its table does (PlanAnalysis).
	a, err := s.answererOf(uses[0].Table)
	if err != nil {
		return nil, err
	}
	return catalog.CheckTextUses(ctx, uses, a.run)
}

// answerer is where a table's answers come from: the owner's DuckDB file,
// or the remote backend that holds the table's rows.
type answerer struct {
	run     catalog.RunFunc
	near    catalog.NearFunc
	analyze func(context.Context, *catalog.AnalysisPlan) (*catalog.AnalysisResult, error)
	remote  catalog.Backend
	logger  *slog.Logger
}

func (s *Store) answererOf(t *catalog.Table) (answerer, error) {
	a := answerer{run: s.runDuck, near: s.near, analyze: s.analyzeDuck, logger: s.logger}
	r, err := s.remoteOf(t)
	if err != nil || r == nil {
		return a, err
	}
	a.run, a.near, a.analyze, a.remote = r.Run, r.Near, r.Analyze, r
	return a, nil
}

// logRemote logs the statement a remote backend ran (DuckDB's own log
// their statements as they run them).
func (a answerer) logRemote(what string, t *catalog.Table, sql string) {
	if a.remote != nil {
		a.logger.Debug(what, "table", t.ID, "backend", a.remote.Name(), "sql", sql)
	}
}

// runDuck answers a plan over a table in the owner's DuckDB file.
func (s *Store) runDuck(ctx context.Context, p *catalog.Plan) (*catalog.QueryResult, error) {
	q, params := ducksql.Query(p)
	s.logger.Debug("query", "table", p.Table.ID, "sql", q, "params", params)
	res := &catalog.QueryResult{FileID: p.Table.FileID, TableID: p.Table.ID, SourceRowCount: p.Table.RowCount,
		Offset: p.Offset, SQL: q, Schema: catalog.NewSchemaPage(p.Table, p.Query.SchemaOffset)}
	var err error
	if p.Grouped() {
		err = s.runGrouped(ctx, p, res, q, params)
	} else {
		err = s.runUngrouped(ctx, p, res, q, params)
	}
	if err != nil {
		return nil, err
	}
	total := res.MatchedRowCount
	if p.Grouped() {
		total = *res.GroupCount
	}
	res.Finish(p, total)
	return res, nil
}

// runGrouped reads a grouped answer: the page's groups, each row carrying
// the counts; a page past the last group asks for the counts apart.
func (s *Store) runGrouped(ctx context.Context, p *catalog.Plan, res *catalog.QueryResult, q string, params []any) error {
	res.Columns = p.OutNames()
	res.Rows = [][]any{}
	width := len(res.Columns)
	var matched, groups, empty int64
	bounds := p.GroupBounds()
	counts := 3
	if bounds {
		counts = 5
	}
	err := s.scan(ctx, q, params, width+counts, func(vals []any) {
		out := make([]any, width)
		for i, v := range vals[:width] {
			out[i] = JSONValue(v, p.OutType(i))
		}
		res.Rows = append(res.Rows, out)
		matched, groups, empty = toInt64(vals[width]), toInt64(vals[width+1]), toInt64(vals[width+2])
		if bounds {
			res.First, res.Last = JSONValue(vals[width+3], p.OutType(0)), JSONValue(vals[width+4], p.OutType(0))
		}
	})
	if err != nil {
		return err
	}
	if len(res.Rows) == 0 && p.Offset > 0 {
		cq, cparams := ducksql.GroupCounts(p)
		err = s.scan(ctx, cq, cparams, 3, func(vals []any) {
			matched, groups, empty = toInt64(vals[0]), toInt64(vals[1]), toInt64(vals[2])
		})
		if err != nil {
			return err
		}
	}
	res.MatchedRowCount, res.GroupCount, res.EmptyGroups = matched, &groups, empty
	return nil
}

// runUngrouped reads an ungrouped answer: each row carries the matched
// count and the aggregates, then one row of the page, if any.
func (s *Store) runUngrouped(ctx context.Context, p *catalog.Plan, res *catalog.QueryResult, q string, params []any) error {
	if p.Limit > 0 {
		for _, c := range p.Cols {
			res.Columns = append(res.Columns, c.Key)
		}
	}
	res.Rows = [][]any{}
	width := 1 + len(p.Aggs)
	if p.Limit > 0 {
		width += 1 + len(p.Cols) + 1
		if p.Sort != nil {
			width++
		}
	}
	return s.scan(ctx, q, params, width, func(vals []any) {
		res.MatchedRowCount = toInt64(vals[0])
		if res.Aggregates == nil && len(p.Aggs) > 0 {
			res.Aggregates = map[string]any{}
			for i, a := range p.Aggs {
				res.Aggregates[a.Name] = JSONValue(vals[1+i], "")
			}
		}
		rest := vals[1+len(p.Aggs):]
		if len(rest) == 0 || rest[0] == nil {
			return
		}
		out := make([]any, len(p.Cols))
		for i := range p.Cols {
			out[i] = JSONValue(rest[1+i], p.Cols[i].Type)
		}
		res.Rows = append(res.Rows, out)
	})
}

// scan runs a statement and calls fn with each row's width values.
func (s *Store) scan(ctx context.Context, q string, params []any, width int, fn func(vals []any)) error {
	rows, err := s.db.QueryContext(ctx, q, params...)
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	vals := make([]any, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return classify(ctx, err)
		}
		fn(vals)
	}
	return classify(ctx, rows.Err())
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return 0
}

// Plan checks q against the owner's catalog and returns its plan.
// Errors: not_found (file_id), invalid (any argument, naming it).
func (s *Store) Plan(ctx context.Context, q catalog.Query) (*catalog.Plan, error) {
	t, err := s.Table(ctx, q.FileID)
	if err != nil {
		return nil, err
	}
	return catalog.PlanFor(t, q)
}

// near is the nearFunc of the owner's DuckDB file, with bound values.
func (s *Store) near(ctx context.Context, t *catalog.Table, c *catalog.Column, kind, value string) ([]string, error) {
	col := ducksql.Ident(c.Key)
	q := `SELECT DISTINCT ` + col + ` FROM data.` + ducksql.Ident(t.ID) + ` WHERE `
	var args []any
	switch kind {
	case catalog.NearNumber:
		q += `TRY_CAST(` + col + ` AS DOUBLE) = CAST(? AS DOUBLE)`
		args = append(args, value)
	case catalog.NearText:
		q += `regexp_replace(lower(` + col + `), '\s+', '', 'g') = regexp_replace(lower(?), '\s+', '', 'g')`
		args = append(args, value)
	default:
		q += col + ` IS NOT NULL`
	}
	return s.queryStrings(ctx, q+` ORDER BY 1 LIMIT `+fmt.Sprint(catalog.MaxHintValues), args...)
}
