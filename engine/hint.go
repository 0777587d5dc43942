package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// maxHintValues bounds the near values a hint shows.
const maxHintValues = 3

// How a hint looks for a filter's value in a text column.
const (
	// nearNumber finds text that equals the value as a number.
	nearNumber = "number"
	// nearText finds text equal to the value ignoring case and spaces.
	nearText = "text"
	// nearAny finds any value, as a sample of the column's form.
	nearAny = "any"
)

// nearFunc returns up to maxHintValues distinct values of column c of t,
// sorted, that match value the way kind says (nearNumber, nearText,
// nearAny; value is unused for nearAny).
type nearFunc func(ctx context.Context, t *Table, c *Column, kind, value string) ([]string, error)

// hint says, for a query that matched nothing, how a filter on a text
// column may have missed: a JSON number against text (an id 12345 stored
// as "00012345"), or text that differs from stored values only in spaces.
// Each eq or in filter is checked alone against the whole table, with
// small limits, through near (the table's DuckDB file or its backend);
// the first finding is the hint.
func hint(ctx context.Context, p *Plan, near nearFunc) (string, error) {
	for _, f := range p.Query.Filters {
		if f.Op != "eq" && f.Op != "in" {
			continue
		}
		var c *Column
		for i := range p.Table.Columns {
			if p.Table.Columns[i].Key == f.Column {
				c = &p.Table.Columns[i]
			}
		}
		if c == nil || c.Type != TypeText {
			continue
		}
		values := []any{f.Value}
		if list, ok := f.Value.([]any); ok {
			values = list
		}
		h, err := hintFor(ctx, p.Table, c, values, near)
		if err != nil || h != "" {
			return h, err
		}
	}
	return "", nil
}

// hintFor looks for a filter's values in another form: numbers as text
// that equals them as a number, else the column's form; text as stored
// text that differs only in case and spaces.
func hintFor(ctx context.Context, t *Table, c *Column, values []any, near nearFunc) (string, error) {
	var number json.Number
	for _, v := range values {
		switch x := v.(type) {
		case json.Number:
			number = x
			found, err := near(ctx, t, c, nearNumber, x.String())
			if err != nil || len(found) > 0 {
				verb := "equal"
				if len(found) == 1 {
					verb = "equals"
				}
				return fmt.Sprintf("%s is text; %s matched nothing, but %s %s it as a number: filter on the text.",
					c.Key, x, quoteList(found), verb), err
			}
		case string:
			found, err := near(ctx, t, c, nearText, x)
			if err != nil || len(found) > 0 {
				return fmt.Sprintf("no %s equals %q; near values (ignoring case and spaces): %s.", c.Key, x, quoteList(found)), err
			}
		}
	}
	if number == "" {
		return "", nil
	}
	sample, err := near(ctx, t, c, nearAny, "")
	if err != nil || len(sample) == 0 {
		return "", err
	}
	return fmt.Sprintf("%s is text; values look like %s. Send the value as text in that form.", c.Key, quoteList(sample[:1])), nil
}

// near is the nearFunc of the owner's DuckDB file, with bound values.
func (s *Store) near(ctx context.Context, t *Table, c *Column, kind, value string) ([]string, error) {
	col := quoteIdent(c.Key)
	q := `SELECT DISTINCT ` + col + ` FROM data.` + quoteIdent(t.ID) + ` WHERE `
	var args []any
	switch kind {
	case nearNumber:
		q += `TRY_CAST(` + col + ` AS DOUBLE) = CAST(? AS DOUBLE)`
		args = append(args, value)
	case nearText:
		q += `regexp_replace(lower(` + col + `), '\s+', '', 'g') = regexp_replace(lower(?), '\s+', '', 'g')`
		args = append(args, value)
	default:
		q += col + ` IS NOT NULL`
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY 1 LIMIT `+fmt.Sprint(maxHintValues), args...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, classify(ctx, err)
		}
		out = append(out, v)
	}
	return out, classify(ctx, rows.Err())
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
