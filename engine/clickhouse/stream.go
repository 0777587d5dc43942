package clickhouse

import (
	"context"
	"strconv"

	"datadesk"
	"datadesk/engine/catalog"
)

// Near returns up to MaxHintValues distinct values of text column c for a
// hint, as Store's DuckDB look-up finds them: kind "number" is text equal
// to value as a number, "text" is text equal to it ignoring case and
// spaces (RE2's \s, as DuckDB's regexp_replace), "any" is any value.
func (c *Cluster) Near(ctx context.Context, t *catalog.Table, col *catalog.Column, kind, value string) ([]string, error) {
	id := chCol(col.Key)
	var cond string
	switch kind {
	case catalog.NearNumber:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, nil
		}
		cond = "toFloat64OrNull(" + id + ") = " + chNumber(f)
	case catalog.NearText:
		space := chLiteral(`\s+`)
		cond = "replaceRegexpAll(lowerUTF8(" + id + "), " + space + ", '') = replaceRegexpAll(lowerUTF8(" + chLiteral(value) + "), " + space + ", '')"
	default:
		cond = id + " IS NOT NULL"
	}
	rows, err := c.all(ctx, "SELECT DISTINCT "+id+" FROM "+c.chTable(t)+" WHERE "+cond+" ORDER BY "+id+" LIMIT "+strconv.Itoa(catalog.MaxHintValues))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		if s, ok := r[0].(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// Stream sends every row a row plan matches to fn, in the plan's order and
// with its columns, with the values Scan gives, as Store.Stream does. The
// matching rows are counted first: a stream cut short is an error, never
// a short export.
// Errors: invalid (a grouped plan), timeout, and whatever fn returns.
func (c *Cluster) Stream(ctx context.Context, p *catalog.Plan, fn func(row []any) error) error {
	if p.Grouped() {
		return datadesk.Errorf(datadesk.Invalid, "a grouped query has no rows to stream").WithField("group_by")
	}
	q, err := c.chSelect(p)
	if err != nil {
		return err
	}
	head, err := c.all(ctx, "SELECT count()"+q.from)
	if err != nil {
		return err
	}
	want := head[0][0].(int64)
	types := make([]string, len(p.Cols))
	for i, rc := range p.Cols {
		types[i] = rc.Type
	}
	return c.scanRows(ctx, q.whole(), types, want, "stream of "+p.Table.ID, fn)
}
