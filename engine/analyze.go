package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
	"datadesk/engine/typing"
)

// PlanAnalysis checks an analysis against the owner's catalog: its table
// and, for a lookup, the lookup table, which must live where the table
// does. Errors: not_found (file_id, lookup.file_id), invalid.
func (s *Store) PlanAnalysis(ctx context.Context, a catalog.Analysis) (*catalog.AnalysisPlan, error) {
	t, err := s.Table(ctx, a.FileID)
	if err != nil {
		return nil, err
	}
	var lt *catalog.Table
	if a.Lookup != nil {
		if lt, err = s.Table(ctx, a.Lookup.FileID); err != nil {
			if datadesk.IsNotFound(err) {
				return nil, datadesk.Errorf(datadesk.NotFound, "no file or table %q to look up", a.Lookup.FileID).WithField("lookup.file_id")
			}
			return nil, err
		}
		if location(lt) != location(t) {
			return nil, datadesk.Errorf(datadesk.Invalid, "the lookup table lives on %s and the table on %s; both must live in one place",
				location(lt), location(t)).WithField("lookup.file_id")
		}
	}
	return catalog.AnalysisFor(t, lt, a)
}

func location(t *catalog.Table) string {
	if t.Location == "" {
		return catalog.LocationDuckDB
	}
	return t.Location
}

// Analyze answers an analysis plan; when filters matched nothing, the
// answer's hint says how one may have missed, as a query's does. Errors:
// invalid (a lookup key that repeats; a part the table's backend cannot
// compute), timeout.
func (s *Store) Analyze(ctx context.Context, p *catalog.AnalysisPlan) (*catalog.AnalysisResult, error) {
	return answer(ctx, s, "analysis", p.Table, p, len(p.Analysis.Filters) > 0,
		func(a answerer) func(context.Context, *catalog.AnalysisPlan) (*catalog.AnalysisResult, error) {
			return a.analyze
		},
		catalog.AnalysisHint)
}

// analyzeDuck answers an analysis of a table in the owner's DuckDB file.
func (s *Store) analyzeDuck(ctx context.Context, p *catalog.AnalysisPlan) (*catalog.AnalysisResult, error) {
	if p.Lookup != nil {
		if err := s.checkLookup(ctx, p); err != nil {
			return nil, err
		}
	}
	q, params := ducksql.Analysis(p)
	if err := catalog.CheckCompiled(q); err != nil {
		return nil, err
	}
	s.logger.Debug("analysis", "table", p.Table.ID, "sql", q, "params", params)
	res := &catalog.AnalysisResult{FileID: p.Table.FileID, TableID: p.Table.ID, SourceRowCount: p.Table.RowCount, Offset: p.Offset, SQL: q}
	width := len(p.Groups) + len(p.Measures)
	counts := 3
	if p.Top != nil {
		counts++
	}
	var matched, groups, empty, tied int64
	err := s.scan(ctx, q, params, width+counts, func(vals []any) {
		out := make([]any, width)
		for i, v := range vals[:width] {
			out[i] = JSONValue(v, p.OutType(i))
		}
		res.Rows = append(res.Rows, out)
		matched, groups, empty = toInt64(vals[width]), toInt64(vals[width+1]), toInt64(vals[width+2])
		if p.Top != nil {
			tied = toInt64(vals[width+3])
		}
	})
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 && p.Grouped() {
		if matched, groups, empty, tied, err = s.analysisCounts(ctx, p); err != nil {
			return nil, err
		}
	}
	res.MatchedRowCount, res.EmptyGroups, res.Tied = matched, empty, tied
	if p.Grouped() {
		res.GroupCount = &groups
	}
	res.Finish(p)
	return res, nil
}

// analysisCounts counts what an analysis's empty page carries none of:
// the rows matched, the groups, the empty groups and the groups tied. An
// empty first page has no group (a having kept none, or no row matched),
// so only the rows matched are counted, by a scan rather than the whole
// grouping again, and without filters or a lookup they are the table's
// rows, which a stored table keeps; a page past the last group asks the
// grouping.
func (s *Store) analysisCounts(ctx context.Context, p *catalog.AnalysisPlan) (matched, groups, empty, tied int64, err error) {
	if p.Offset == 0 && p.Limit > 0 && !p.WindowsAll() {
		if p.Where == nil && p.Lookup == nil {
			return p.Table.RowCount, 0, 0, 0, nil
		}
		q, params := ducksql.AnalysisMatched(p)
		err = s.scan(ctx, q, params, 1, func(vals []any) { matched = toInt64(vals[0]) })
		return matched, 0, 0, 0, err
	}
	q, params := ducksql.AnalysisCounts(p)
	err = s.scan(ctx, q, params, 4, func(vals []any) {
		matched, groups, empty, tied = toInt64(vals[0]), toInt64(vals[1]), toInt64(vals[2]), toInt64(vals[3])
	})
	return matched, groups, empty, tied, err
}

// checkLookup refuses a lookup table whose key repeats: each row would
// take several lookup rows, and the answer would count it several times.
func (s *Store) checkLookup(ctx context.Context, p *catalog.AnalysisPlan) error {
	// A stored table never changes: keys found unique stay so.
	key := p.Lookup.Table.ID
	for _, k := range p.Lookup.On {
		key += "\x00" + k.Lookup.Key
	}
	if s.tables.isUnique(key) {
		return nil
	}
	var n int64
	var example sql.NullString
	if err := s.db.QueryRowContext(ctx, ducksql.LookupRepeats(p)).Scan(&n, &example); err != nil {
		return classify(ctx, err)
	}
	if n == 0 {
		s.tables.setUnique(key)
		return nil
	}
	return datadesk.Errorf(datadesk.Invalid, "%d keys repeat in lookup table %s (%q is one); a lookup needs each key once",
		n, p.Lookup.Table.ID, example.String).WithField("lookup.on")
}

// ShowAnalysis stores an analysis's whole result as a new table of the
// owner, with the source and the analysis kept as its provenance. A
// result without groups makes nothing and returns nil.
func (s *Store) ShowAnalysis(ctx context.Context, p *catalog.AnalysisPlan, res *catalog.AnalysisResult) (*catalog.View, error) {
	if res.GroupCount != nil && *res.GroupCount == 0 {
		return nil, nil
	}
	if r, err := s.remoteOf(p.Table); err != nil {
		return nil, err
	} else if r != nil {
		return nil, datadesk.Errorf(datadesk.Invalid, "an analysis of a table on %s is not stored; ask for fewer groups, or move the table to %s",
			r.Name(), catalog.LocationDuckDB).WithField("show")
	}
	names := p.OutNames()
	keys := typing.UniqueKeys(typing.ColumnKeys(names))
	cols := make([]catalog.Column, len(names))
	for i, n := range names {
		reason := "group"
		if i >= len(p.Groups) {
			reason = "measure: " + p.Measures[i-len(p.Groups)].Op
		}
		cols[i] = catalog.Column{Key: keys[i], Label: n, Type: p.OutType(i), Reason: reason}
	}
	query, err := json.Marshal(p.Analysis)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if err := s.room(ctx, s.db, false, 0); err != nil {
		return nil, err
	}
	sel, params := ducksql.AnalysisView(p, keys)
	t := &catalog.Table{ID: datadesk.NewID("t"), FileID: p.Table.FileID, Name: p.Table.Name + " (analysis)", Columns: cols,
		CreatedAt: time.Now().UTC(), SourceTableID: p.Table.ID, Query: string(query)}
	err = s.inTx(ctx, func(conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, `CREATE TABLE data.`+ducksql.Ident(t.ID)+` AS `+sel, params...); err != nil {
			return classify(ctx, err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM data.`+ducksql.Ident(t.ID)).Scan(&t.RowCount); err != nil {
			return classify(ctx, err)
		}
		t.Report = catalog.Report{Table: t.Name, RowsRead: t.RowCount, RowsStored: t.RowCount, Notes: []string{"derived by an analysis of table " + p.Table.ID}}
		return writeCatalog(ctx, conn, t, "view")
	})
	if err != nil {
		return nil, err
	}
	return &catalog.View{TableID: t.ID, FileID: t.FileID, Derived: true, RowCount: t.RowCount}, nil
}
