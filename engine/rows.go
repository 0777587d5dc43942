package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// Rows returns a page of a table. Rows in file order unless sorted; sorted
// pages break ties by file order so paging is stable. Every page of a
// table is read in about the time of its first (ducksql.WayOf).
// Errors: not_found, invalid (offset, limit, sort, direction, filters,
// search, columns).
func (s *Store) Rows(ctx context.Context, tableID string, req catalog.PageRequest) (*catalog.Page, error) {
	t, err := s.Table(ctx, tableID)
	if err != nil {
		return nil, err
	}
	p, err := catalog.PagePlanFor(t, req)
	if err != nil {
		return nil, err
	}
	if r, err := s.remoteOf(t); err != nil {
		return nil, err
	} else if r != nil {
		return r.Rows(ctx, p)
	}
	total := t.RowCount
	if p.Filtered() {
		q, params := ducksql.PageCount(p)
		if err := s.db.QueryRowContext(ctx, q, params...).Scan(&total); err != nil {
			return nil, classify(ctx, err)
		}
	}
	var rows [][]any
	switch ducksql.WayOf(p, total) {
	case ducksql.ByPosition:
		q, args := ducksql.PageByPosition(p)
		rows, err = s.pageRows(ctx, t, q, args)
	case ducksql.ByTop:
		q, args, back := ducksql.PageTop(p, total)
		if rows, err = s.pageRows(ctx, t, q, args); back {
			slices.Reverse(rows)
		}
	case ducksql.ByOrderIndex:
		rows, err = s.pageByIndex(ctx, p)
	case ducksql.ByRowIDs:
		rows, err = s.pageByRowIDs(ctx, p, total)
	}
	if err != nil {
		return nil, err
	}
	return p.Page(rows, total), nil
}

// pageByIndex reads a deep page of an unfiltered sorted table through
// the table's order stored once, storing it first when this is the
// first deep page in that order: a stored table never changes, nor do
// its rows' positions, which a move or a rewrite keeps.
func (s *Store) pageByIndex(ctx context.Context, p *catalog.PagePlan) ([][]any, error) {
	if err := s.storeOrder(ctx, p); err != nil {
		return nil, err
	}
	q, args := ducksql.PageByIndex(p)
	return s.pageRows(ctx, p.Table, q, args)
}

// storeOrder stores the order of p's table by p's sort unless it is
// stored, once however many ask at the same time.
func (s *Store) storeOrder(ctx context.Context, p *catalog.PagePlan) error {
	name := ducksql.OrderIndexName(p)
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	if s.orders[name] {
		return nil
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ? AND table_name = ?`,
		ducksql.OrderSchema, name).Scan(&n)
	if err == nil && n == 0 {
		_, err = s.db.ExecContext(ctx, ducksql.OrderIndex(p))
	}
	if err != nil {
		return classify(ctx, err)
	}
	if s.orders == nil {
		s.orders = map[string]bool{}
	}
	s.orders[name] = true
	return nil
}

// dropOrders drops the stored orders of the tables ids (a file deleted),
// on conn inside the deletion's transaction.
func (s *Store) dropOrders(ctx context.Context, conn *sql.Conn, ids []string) error {
	s.orderMu.Lock()
	defer s.orderMu.Unlock()
	for _, id := range ids {
		rows, err := conn.QueryContext(ctx, `SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ?
			AND starts_with(table_name, ?)`, ducksql.OrderSchema, id+"_")
		if err != nil {
			return classify(ctx, err)
		}
		var names []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return classify(ctx, err)
			}
			names = append(names, n)
		}
		rows.Close()
		for _, n := range names {
			if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+ducksql.OrderSchema+`.`+ducksql.Ident(n)); err != nil {
				return classify(ctx, err)
			}
			delete(s.orders, n)
		}
	}
	return nil
}

// pageByRowIDs reads a deep page of filtered rows: their row ids, sorted
// alone, then the rows, put in the ids' order.
func (s *Store) pageByRowIDs(ctx context.Context, p *catalog.PagePlan, total int64) ([][]any, error) {
	q, args, back := ducksql.PageRowIDs(p, total)
	var ids []int64
	err := s.scan(ctx, q, args, 1, func(vals []any) { ids = append(ids, toInt64(vals[0])) })
	if err != nil {
		return nil, err
	}
	if back {
		slices.Reverse(ids)
	}
	at := make(map[int64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	rows := make([][]any, len(ids))
	found, err := s.pageRows(ctx, p.Table, ducksql.FetchRows(p), []any{ids}, true)
	for _, r := range found {
		rows[at[toInt64(r[0])]] = r[1:]
	}
	return slices.DeleteFunc(rows, func(r []any) bool { return r == nil }), err
}

// pageRows runs a page's statement and reads its rows as JSON values,
// each after its row id when the statement gives it first (withID).
func (s *Store) pageRows(ctx context.Context, t *catalog.Table, q string, args []any, withID ...bool) ([][]any, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	lead := 0
	if len(withID) > 0 && withID[0] {
		lead = 1
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, lead+len(t.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(ctx, err)
		}
		for i := lead; i < len(vals); i++ {
			vals[i] = JSONValue(vals[i], t.Columns[i-lead].Type)
		}
		out = append(out, vals)
	}
	return out, classify(ctx, rows.Err())
}

// JSONValue turns a scanned DuckDB value into what JSON should carry: as
// catalog.JSONValue, with DuckDB's decimals exact, as json.Number.
func JSONValue(v any, typ string) any {
	if d, ok := v.(duckdb.Decimal); ok {
		return json.Number(decimalString(d))
	}
	return catalog.JSONValue(v, typ)
}

func decimalString(d duckdb.Decimal) string {
	s := d.Value.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	scale := int(d.Scale)
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
