package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"datadesk"
)

// viewSQL returns the statement whose result is the whole of a plan's
// answer, every row or group in order, unpaged.
func (p *Plan) viewSQL() (string, []any) {
	var b strings.Builder
	b.WriteString("WITH m AS (" + p.source() + ") SELECT ")
	if p.grouped {
		var keys []string
		for _, g := range p.groups {
			b.WriteString(quoteIdent(g.Key) + ", ")
			keys = append(keys, quoteIdent(g.Key))
		}
		for i, a := range p.aggs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(aggSQL(a) + " AS " + quoteIdent(a.Name))
		}
		b.WriteString(" FROM m GROUP BY " + strings.Join(keys, ", "))
		b.WriteString(" ORDER BY " + strings.Join(p.viewOrder(), ", "))
		return b.String(), p.params
	}
	for i, c := range p.rowCols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Key))
	}
	b.WriteString(" FROM m ORDER BY " + strings.Join(p.order, ", "))
	return b.String(), p.params
}

// viewOrder is the grouped order with output positions in place of aliases.
func (p *Plan) viewOrder() []string {
	out := make([]string, len(p.order))
	for i, o := range p.order {
		out[i] = o
		for j := len(p.groups) + len(p.aggs); j >= 1; j-- {
			alias := outAlias(j - 1)
			if strings.HasPrefix(o, alias+" ") {
				out[i] = fmt.Sprintf("%d", j) + o[len(alias):]
				break
			}
		}
	}
	return out
}

// Show makes a query's result displayable. The unfiltered original is shown
// as it is; a derived result becomes a new table of the owner, with the
// source and the query kept as its provenance; a result without rows makes
// nothing and returns nil.
func (s *Store) Show(ctx context.Context, p *Plan, res *QueryResult) (*View, error) {
	if !p.Derived() {
		return &View{TableID: p.Table.ID, FileID: p.Table.FileID, RowCount: p.Table.RowCount}, nil
	}
	if res.MatchedRowCount == 0 {
		return nil, nil
	}
	var cols []Column
	if p.grouped {
		cols = append(cols, p.groups...)
		for _, a := range p.aggs {
			reason := "aggregate: " + a.Op
			if a.Col != nil {
				reason += " of " + a.Col.Key
			}
			cols = append(cols, Column{Key: a.Name, Label: a.Name, Type: aggType(a), Reason: reason})
		}
	} else {
		cols = p.rowCols
	}
	query, err := json.Marshal(p.Query)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	id := datadesk.NewID("t")
	sel, params := p.viewSQL()

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN TRANSACTION`); err != nil {
		return nil, classify(ctx, err)
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE data.`+quoteIdent(id)+` AS `+sel, params...); err != nil {
		return nil, classify(ctx, err)
	}
	var n int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM data.`+quoteIdent(id)).Scan(&n); err != nil {
		return nil, classify(ctx, err)
	}
	name := p.Table.Name + " (query)"
	report, _ := json.Marshal(Report{Table: name, RowsRead: n, RowsStored: n, Notes: []string{"derived by a query of table " + p.Table.ID}})
	if _, err := conn.ExecContext(ctx, `INSERT INTO dd_tables (id, file_id, ordinal, name, row_count, report, kind, source_table_id, query, created_at)
		VALUES (?, ?, 0, ?, ?, ?, 'view', ?, ?, ?)`, id, p.Table.FileID, name, n, string(report), p.Table.ID, string(query), time.Now().UTC()); err != nil {
		return nil, classify(ctx, err)
	}
	for i, c := range cols {
		if _, err := conn.ExecContext(ctx, `INSERT INTO dd_columns VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, i, c.Key, c.Label, c.Type, c.Identifier, c.Reason); err != nil {
			return nil, classify(ctx, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		return nil, classify(ctx, err)
	}
	committed = true
	return &View{TableID: id, FileID: p.Table.FileID, Derived: true, RowCount: n}, nil
}
