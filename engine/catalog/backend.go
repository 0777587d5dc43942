package catalog

import (
	"context"
	"strconv"
	"strings"

	"datadesk/engine/typing"
)

// Where a table's rows live, as its catalog entry says.
const (
	// LocationDuckDB is the owner's own DuckDB file, the default.
	LocationDuckDB = "duckdb"
	// LocationClickHouse is the ClickHouse cluster of Config.Remote.
	LocationClickHouse = "clickhouse"
)

// Backend holds the rows of tables outside the owner's DuckDB file and
// answers the same checked plans, pages and scans over them with the same
// semantics. The owner's catalog stays in DuckDB; a table's catalog entry
// says which backend holds its rows. *ClickHouse implements it.
type Backend interface {
	// Name is the location the catalog records for tables it holds.
	Name() string
	// Run answers a checked files.query_table plan.
	Run(ctx context.Context, p *Plan) (*QueryResult, error)
	// Analyze answers a checked files.analyze_table plan, or refuses
	// (invalid) a part the backend cannot compute exactly, naming it.
	Analyze(ctx context.Context, p *AnalysisPlan) (*AnalysisResult, error)
	// Near returns up to MaxHintValues distinct values of text column c
	// of t, sorted, for a hint: text equal to value as a number (kind
	// "number"), text equal to it ignoring case and spaces ("text"), or
	// any values ("any").
	Near(ctx context.Context, t *Table, c *Column, kind, value string) ([]string, error)
	// Stream sends every row a row plan matches, as Store.Stream does.
	Stream(ctx context.Context, p *Plan, fn func(row []any) error) error
	// Rows returns a page for browsing.
	Rows(ctx context.Context, p *PagePlan) (*Page, error)
	// Scan streams every row in file order, as Store.Scan does.
	Scan(ctx context.Context, t *Table, fn func(row []any) error) error
	// Put creates table t and stores the rows that write produces; cols
	// are the columns' SQL types as DuckDB names them (DECIMAL(18,2)).
	Put(ctx context.Context, t *Table, sqlTypes []string, write func(w RowWriter) error) error
	// Count returns how many rows the backend holds for t.
	Count(ctx context.Context, t *Table) (int64, error)
	// SQLTypes returns the DuckDB names of the column types of t.
	SQLTypes(ctx context.Context, t *Table) ([]string, error)
	// Derive stores the whole result of a plan, in order, as the new
	// table t next to the plan's table, and returns its row count.
	Derive(ctx context.Context, p *Plan, t *Table) (int64, error)
	// Copy makes dst, a new table with src's columns, a copy of src next
	// to it.
	Copy(ctx context.Context, src, dst *Table) error
	// Drop removes t; a missing table is no error.
	Drop(ctx context.Context, t *Table) error
}

// RowWriter takes rows for Backend.Put, each value as its text (DuckDB's
// cast to VARCHAR; booleans as true or false) or nil for NULL, in file
// order.
type RowWriter interface {
	Write(row []*string) error
}

// SQLTypeOf is the DuckDB column type of a column of catalogType;
// decimal is the DECIMAL it has when it is one.
func SQLTypeOf(catalogType, decimal string) string {
	switch catalogType {
	case typing.TypeInteger:
		return "BIGINT"
	case typing.TypeDecimal:
		return decimal
	case typing.TypeDouble:
		return "DOUBLE"
	case typing.TypeBoolean:
		return "BOOLEAN"
	case typing.TypeDate:
		return "DATE"
	case typing.TypeTimestamp:
		return "TIMESTAMP"
	case typing.TypeTime:
		return "TIME"
	}
	return "VARCHAR"
}

// DecimalParts reads precision and scale from DECIMAL(18,2) or
// Nullable(Decimal(18, 2)); 18,0 when absent.
func DecimalParts(t string) (int, int) {
	i := strings.LastIndex(t, "(")
	j := strings.Index(t, ")")
	if i < 0 || j < i {
		return 18, 0
	}
	parts := strings.Split(t[i+1:j], ",")
	if len(parts) != 2 {
		return 18, 0
	}
	p, err1 := strconv.Atoi(strings.TrimSpace(parts[0]))
	s, err2 := strconv.Atoi(strings.TrimSpace(parts[1]))
	if err1 != nil || err2 != nil {
		return 18, 0
	}
	return p, s
}
