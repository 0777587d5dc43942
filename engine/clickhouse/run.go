package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"datadesk"

	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// Run answers a checked plan on the cluster with the semantics of
// Store.Run. Errors: timeout when ctx ends first.
func (c *Cluster) Run(ctx context.Context, p *catalog.Plan) (*catalog.QueryResult, error) {
	counts, page, err := c.chStatements(p)
	if err != nil {
		return nil, err
	}
	res := &catalog.QueryResult{FileID: p.Table.FileID, TableID: p.Table.ID, SourceRowCount: p.Table.RowCount,
		Offset: p.Offset, SQL: counts, Schema: catalog.NewSchemaPage(p.Table, p.Query.SchemaOffset)}
	if page != "" {
		res.SQL += ";\n" + page
	}
	head, err := c.all(ctx, counts)
	if err != nil {
		return nil, err
	}
	if len(head) != 1 {
		return nil, fmt.Errorf("clickhouse: %d count rows, want 1", len(head))
	}
	res.MatchedRowCount = head[0][0].(int64)
	total := res.MatchedRowCount
	if p.Grouped() {
		n := head[0][1].(int64)
		res.GroupCount, total, res.EmptyGroups = &n, n, head[0][2].(int64)
		if p.GroupBounds() {
			res.First, res.Last = chJSONValue(head[0][3], p.OutType(0)), chJSONValue(head[0][4], p.OutType(0))
		}
		res.Columns = p.OutNames()
	} else if len(p.Aggs) > 0 {
		res.Aggregates = map[string]any{}
		for i, a := range p.Aggs {
			res.Aggregates[a.Name] = head[0][1+i]
		}
	}
	res.Rows = [][]any{}
	if page != "" {
		rows, err := c.all(ctx, page)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			for i, v := range r {
				typ := ""
				if p.Grouped() {
					typ = p.OutType(i)
				} else {
					typ = p.Cols[i].Type
				}
				r[i] = chJSONValue(v, typ)
			}
		}
		if rows != nil {
			res.Rows = rows
		}
		if !p.Grouped() {
			for _, rc := range p.Cols {
				res.Columns = append(res.Columns, rc.Key)
			}
		}
	}
	res.Finish(p, total)
	return res, nil
}

// all runs a small SELECT and returns its rows as Go values (chValue).
func (c *Cluster) all(ctx context.Context, stmt string) ([][]any, error) {
	return c.allOn(ctx, c.cfg.Nodes, stmt)
}

// allOn is all on the first of nodes that answers.
func (c *Cluster) allOn(ctx context.Context, nodes []string, stmt string) ([][]any, error) {
	// A node lost while it answers, or a replica lost while the node
	// asks it, fails the statement: it runs again on the nodes after,
	// where ClickHouse routes around the replica that is down.
	var err error
	for i := range nodes {
		var out [][]any
		out, err = c.allOnce(attempt(ctx), nodes[i:], stmt)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil || !c.elsewhere(err) || i == len(nodes)-1 {
			break
		}
		c.failover(ctx)
	}
	c.failed(ctx)
	return nil, err
}

// allOnce is allOn without the retries.
func (c *Cluster) allOnce(ctx context.Context, nodes []string, stmt string) ([][]any, error) {
	r, err := c.queryOn(ctx, nodes, stmt, true)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]any
	for {
		fields, err := r.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, c.classify(ctx, err)
		}
		row := make([]any, len(fields))
		for i, f := range fields {
			if row[i], err = chValue(f, r.types[i]); err != nil {
				return nil, err
			}
		}
		out = append(out, row)
	}
}

// chValue reads one field by its ClickHouse type: integers as int64,
// decimals exactly as json.Number, floats as float64, text as string.
func chValue(f *string, typ string) (any, error) {
	if f == nil {
		return nil, nil
	}
	typ = strings.TrimSuffix(strings.TrimPrefix(typ, "Nullable("), ")")
	s := *f
	switch {
	case strings.HasPrefix(typ, "Int"), strings.HasPrefix(typ, "UInt"):
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: %s value %q: %w", typ, s, err)
		}
		return n, nil
	case strings.HasPrefix(typ, "Float"):
		switch s {
		case "nan", "-nan":
			return math.NaN(), nil
		case "inf", "+inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: %s value %q: %w", typ, s, err)
		}
		return x, nil
	case strings.HasPrefix(typ, "Decimal"):
		return json.Number(s), nil
	}
	return s, nil
}

// chJSONValue turns a value read by chValue into what JSONValue makes of
// the same cell read from DuckDB.
func chJSONValue(v any, typ string) any {
	if f, ok := v.(float64); ok {
		return catalog.JSONValue(f, typ)
	}
	switch typ {
	case typing.TypeBoolean:
		if n, ok := v.(int64); ok {
			return n != 0
		}
	case typing.TypeTimestamp:
		if s, ok := v.(string); ok {
			if t, err := parseDuckTimestamp(s); err == nil {
				return catalog.JSONValue(t, typ)
			}
		}
	}
	return v
}

// parseDuckTimestamp reads a timestamp as DuckDB writes it as text.
func parseDuckTimestamp(s string) (time.Time, error) {
	return time.Parse("2006-01-02 15:04:05.999999999", s)
}

// Rows returns a checked page for browsing, in Store.Rows's order.
// Errors: timeout.
func (c *Cluster) Rows(ctx context.Context, p *catalog.PagePlan) (*catalog.Page, error) {
	t := p.Table
	where := chWhere(p.Conds, p.Search)
	order := chRowKey
	if p.Sort != nil {
		dir := "ASC"
		if p.Desc {
			dir = "DESC"
		}
		order = chOrder(chCol(p.Sort.Key), p.Sort.Type == typing.TypeDecimal, dir) + ", " + chRowKey
		if p.Sort.Natural() {
			order = chNaturalOrder(chCol(p.Sort.Key), dir) + ", " + chRowKey
		}
	}
	total := t.RowCount
	if where != "" {
		head, err := c.all(ctx, "SELECT count() FROM "+c.chTable(t)+where)
		if err != nil {
			return nil, err
		}
		total = head[0][0].(int64)
	}
	rows, err := c.all(ctx, "SELECT "+chColumns(t)+" FROM "+c.chTable(t)+where+" ORDER BY "+order+
		" LIMIT "+strconv.FormatInt(p.Offset, 10)+", "+strconv.Itoa(p.Limit))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		for i := range r {
			r[i] = chJSONValue(r[i], t.Columns[i].Type)
		}
	}
	return p.Page(rows, total), nil
}

func chColumns(t *catalog.Table) string {
	cols := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		cols[i] = chCol(col.Key)
	}
	return strings.Join(cols, ", ")
}

// Scan streams every row in file order, with the values Store.Scan gives:
// dates and timestamps as time.Time, booleans as bool, decimals as
// json.Number. A stream cut short is an error, never a short export.
func (c *Cluster) Scan(ctx context.Context, t *catalog.Table, fn func(row []any) error) error {
	types := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		types[i] = col.Type
	}
	return c.scanRows(ctx, "SELECT "+chColumns(t)+" FROM "+c.chTable(t)+" ORDER BY "+chRowKey, types, t.RowCount, "scan of "+t.ID, fn)
}

// scanRows runs stmt and sends each row to fn with the values Store.Scan
// gives for the catalog types; fewer or more rows than want is an error,
// so that an export is never cut short unnoticed.
func (c *Cluster) scanRows(ctx context.Context, stmt string, types []string, want int64, what string, fn func(row []any) error) error {
	r, err := c.query(ctx, stmt, false)
	if err != nil {
		return err
	}
	defer r.Close()
	row := make([]any, len(types))
	var n int64
	for {
		fields, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.classify(ctx, err)
		}
		for i, f := range fields {
			v, err := chValue(f, r.types[i])
			if err != nil {
				return err
			}
			if row[i], err = chScanValue(v, types[i]); err != nil {
				return err
			}
		}
		if err := fn(row); err != nil {
			return err
		}
		n++
	}
	if n != want {
		return fmt.Errorf("clickhouse: %s gave %d rows, want %d", what, n, want)
	}
	return nil
}

func chScanValue(v any, typ string) (any, error) {
	s, isText := v.(string)
	switch {
	case v == nil:
		return nil, nil
	case typ == typing.TypeBoolean:
		return v.(int64) != 0, nil
	case typ == typing.TypeDate && isText:
		return time.Parse("2006-01-02", s)
	case typ == typing.TypeTimestamp && isText:
		return parseDuckTimestamp(s)
	}
	return v, nil
}

// Count returns how many rows the cluster holds for t.
func (c *Cluster) Count(ctx context.Context, t *catalog.Table) (int64, error) {
	rows, err := c.all(ctx, "SELECT count() FROM "+c.chTable(t))
	if err != nil {
		return 0, err
	}
	return rows[0][0].(int64), nil
}

// SQLTypes returns the DuckDB types of t's columns, read from the cluster.
func (c *Cluster) SQLTypes(ctx context.Context, t *catalog.Table) ([]string, error) {
	rows, err := c.all(ctx, "SELECT name, type FROM system.columns WHERE database = "+chLiteral(c.cfg.Database)+
		" AND table = "+chLiteral(t.ID))
	if err != nil {
		return nil, err
	}
	byName := map[string]string{}
	for _, r := range rows {
		byName[r[0].(string)] = r[1].(string)
	}
	out := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		ct, ok := byName[col.Key]
		if !ok {
			return nil, fmt.Errorf("clickhouse: table %s has no column %q", t.ID, col.Key)
		}
		out[i] = duckType(col.Type, ct)
	}
	return out, nil
}

// Put creates t on every shard and the Distributed table over them, and
// inserts the rows write gives, numbering them in order. The insert is
// synchronous: when Put returns, every shard has its rows. A table left by
// an earlier attempt is replaced.
func (c *Cluster) Put(ctx context.Context, t *catalog.Table, sqlTypes []string, write func(w catalog.RowWriter) error) error {
	if err := c.ddl(ctx, func(on string) string { return "CREATE DATABASE IF NOT EXISTS " + chIdent(c.cfg.Database) + on }, c.hasDatabase); err != nil {
		return err
	}
	if err := c.Drop(ctx, t); err != nil {
		return err
	}
	types := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		types[i] = chType(col.Type, sqlTypes[i])
	}
	if err := c.create(ctx, t, types); err != nil {
		return err
	}
	node, err := c.liveNode(ctx)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		w := newBinRowWriter(pw, t.Columns, sqlTypes)
		err := write(w)
		if err == nil {
			err = w.flush()
		}
		pw.CloseWithError(err)
		done <- err
	}()
	resp, err := c.request(ctx, node, "INSERT INTO "+c.chTable(t)+" FORMAT RowBinary", pr, c.insertSettings())
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	pr.CloseWithError(io.ErrClosedPipe)
	if werr := <-done; werr != nil && werr != io.ErrClosedPipe {
		return werr
	}
	return err
}

// insertSettings make an insert through a Distributed table return once
// every shard has its rows, and, with replicas, the write quorum of its
// replicas; what an insert reads, it reads as any read does.
func (c *Cluster) insertSettings() url.Values {
	v := url.Values{"insert_distributed_sync": {"1"}}
	if q := c.quorum(); q > 1 {
		v.Set("insert_quorum", strconv.Itoa(q))
	}
	return c.readSettings(v)
}

// create makes t's part on every shard and the Distributed table over
// them, with the row number first and then the columns of the given
// ClickHouse types.
func (c *Cluster) create(ctx context.Context, t *catalog.Table, types []string) error {
	cols := []string{chRowKey + " UInt64"}
	for i, col := range t.Columns {
		cols = append(cols, chCol(col.Key)+" "+types[i])
	}
	engine := "MergeTree"
	if c.cfg.Replicas > 1 {
		// Each replica of a shard registers under the same path, new for
		// each table made, so that a table dropped and made again never
		// meets the old one's replication log.
		engine = "ReplicatedMergeTree(" + chLiteral("/clickhouse/tables/{shard}/"+c.cfg.Database+"/"+t.ID+"_local/"+datadesk.NewID("z")) + ", '{replica}')"
	}
	stmts := []struct {
		name string
		on   func(string) string
	}{
		{t.ID + "_local", func(on string) string {
			return "CREATE TABLE " + c.chLocal(t) + on + " (" + strings.Join(cols, ", ") + ") ENGINE = " + engine + " ORDER BY " + chRowKey
		}},
		{t.ID, func(on string) string {
			return "CREATE TABLE " + c.chTable(t) + on + " AS " + c.chLocal(t) + " ENGINE = Distributed(" + chIdent(c.cfg.Cluster) + ", " +
				chIdent(c.cfg.Database) + ", " + chIdent(t.ID+"_local") + ", intHash64(" + chRowKey + "))"
		}},
	}
	for _, s := range stmts {
		if err := c.ddl(ctx, s.on, c.hasTable(s.name, true)); err != nil {
			return err
		}
	}
	if c.cfg.Replicas > 1 {
		return c.waitReplicas(ctx, t)
	}
	return nil
}

// waitReplicas waits until, on each node that answers, the write
// quorum of t's new part's replicas is active, as an insert that waits
// for them needs.
func (c *Cluster) waitReplicas(ctx context.Context, t *catalog.Table) error {
	stmt := "SELECT active_replicas FROM system.replicas WHERE database = " + chLiteral(c.cfg.Database) +
		" AND table = " + chLiteral(t.ID+"_local")
	return c.waitNodes(ctx, func(ctx context.Context, n string) (bool, error) {
		rows, err := c.allOnce(ctx, []string{n}, stmt)
		if err != nil {
			return false, err
		}
		return len(rows) == 1 && rows[0][0].(int64) >= int64(c.quorum()), nil
	})
}

// replicaWait bounds how long a new table's replicas may take to become
// active.
const replicaWait = 30 * time.Second

// Derive stores the whole result of plan p, in its order, as the new table
// t on the cluster, without its rows leaving the cluster, and returns how
// many rows it has. t's columns are the result's columns.
func (c *Cluster) Derive(ctx context.Context, p *catalog.Plan, t *catalog.Table) (int64, error) {
	q, err := c.chSelect(p)
	if err != nil {
		return 0, err
	}
	// Aliases keep two equal expressions (count under two names) apart;
	// they are only seen by the INSERT around this subquery.
	for i := range q.sel {
		q.sel[i] += " AS " + chIdent("__dd_o"+strconv.Itoa(i+1))
	}
	view := q.whole()
	r, err := c.query(ctx, view+" LIMIT 0", true)
	if err != nil {
		return 0, err
	}
	r.Close()
	types := make([]string, len(r.types))
	for i, typ := range r.types {
		if !strings.HasPrefix(typ, "Nullable(") {
			typ = "Nullable(" + typ + ")"
		}
		types[i] = typ
	}
	if err := c.create(ctx, t, types); err != nil {
		return 0, err
	}
	// One thread numbers the rows in the order the sorted result arrives.
	settings := c.insertSettings()
	settings.Set("max_threads", "1")
	node, err := c.liveNode(ctx)
	if err != nil {
		_ = c.Drop(context.WithoutCancel(ctx), t)
		return 0, err
	}
	resp, err := c.request(ctx, node, "INSERT INTO "+c.chTable(t)+" SELECT rowNumberInAllBlocks(), * FROM ("+view+")", nil, settings)
	if err != nil {
		_ = c.Drop(context.WithoutCancel(ctx), t)
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	n, err := c.Count(ctx, t)
	if err != nil {
		_ = c.Drop(context.WithoutCancel(ctx), t)
	}
	return n, err
}

// Copy makes dst a copy of src on the cluster; no row leaves it.
func (c *Cluster) Copy(ctx context.Context, src, dst *catalog.Table) error {
	rows, err := c.all(ctx, "SELECT name, type FROM system.columns WHERE database = "+chLiteral(c.cfg.Database)+
		" AND table = "+chLiteral(src.ID)+" AND name != "+chLiteral(chRowKey))
	if err != nil {
		return err
	}
	byName := map[string]string{}
	for _, r := range rows {
		byName[r[0].(string)] = r[1].(string)
	}
	types := make([]string, len(dst.Columns))
	for i, col := range dst.Columns {
		if types[i] = byName[col.Key]; types[i] == "" {
			return fmt.Errorf("clickhouse: table %s has no column %q", src.ID, col.Key)
		}
	}
	if err := c.create(ctx, dst, types); err != nil {
		return err
	}
	node, err := c.liveNode(ctx)
	if err != nil {
		_ = c.Drop(context.WithoutCancel(ctx), dst)
		return err
	}
	resp, err := c.request(ctx, node, "INSERT INTO "+c.chTable(dst)+" SELECT "+chRowKey+", "+chColumns(src)+" FROM "+c.chTable(src), nil, c.insertSettings())
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		var n int64
		if n, err = c.Count(ctx, dst); err == nil && n != src.RowCount {
			err = fmt.Errorf("clickhouse: copy of %s has %d rows, want %d", src.ID, n, src.RowCount)
		}
	}
	if err != nil {
		_ = c.Drop(context.WithoutCancel(ctx), dst)
	}
	return err
}

// Drop removes t from every shard; with replicas, a replica that is down
// drops it when it is back.
func (c *Cluster) Drop(ctx context.Context, t *catalog.Table) error {
	for _, name := range []string{t.ID, t.ID + "_local"} {
		stmt := "DROP TABLE IF EXISTS " + chIdent(c.cfg.Database) + "." + chIdent(name)
		if err := c.ddl(ctx, func(on string) string { return stmt + on }, c.hasTable(name, false)); err != nil {
			return err
		}
	}
	return nil
}

// Statements returns the ClickHouse statements that answer a plan, for
// logs and benchmarks.
func (c *Cluster) Statements(p *catalog.Plan) ([]string, error) {
	counts, page, err := c.chStatements(p)
	if err != nil {
		return nil, err
	}
	if page == "" {
		return []string{counts}, nil
	}
	return []string{counts, page}, nil
}

// Drain runs statements on the cluster, as compiled by Statements, reads
// every row without decoding it and returns how many there were: the
// baseline of a benchmark.
func (c *Cluster) Drain(ctx context.Context, stmts ...string) (int, error) {
	n := 0
	for _, s := range stmts {
		r, err := c.query(ctx, s, true)
		if err != nil {
			return n, err
		}
		for {
			if _, err = r.line(); err != nil {
				break
			}
			n++
		}
		r.Close()
		if err != io.EOF {
			return n, c.classify(ctx, err)
		}
	}
	return n, nil
}

// ShardRows returns how many rows of t each node holds in its local part,
// in the order of Config.Nodes. Errors: unavailable when a node does not
// answer.
func (c *Cluster) ShardRows(ctx context.Context, t *catalog.Table) ([]int64, error) {
	out := make([]int64, len(c.cfg.Nodes))
	for i, n := range c.cfg.Nodes {
		res, err := c.allOn(ctx, []string{n}, "SELECT count() FROM "+c.chLocal(t))
		if err != nil {
			return nil, err
		}
		out[i] = res[0][0].(int64)
	}
	return out, nil
}

// Tables returns the names of the tables in the cluster's database, as
// the first node that answers sees them: a Distributed table and its
// local part for each table held here.
func (c *Cluster) Tables(ctx context.Context) ([]string, error) {
	rows, err := c.all(ctx, "SELECT name FROM system.tables WHERE database = "+chLiteral(c.cfg.Database)+" ORDER BY name")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0].(string)
	}
	return out, nil
}
