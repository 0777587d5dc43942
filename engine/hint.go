package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// maxHintValues bounds the near values a hint shows.
const maxHintValues = 3

// hint says, for a query that matched nothing, how a filter on a text
// column may have missed: a JSON number against text (an id 12345 stored
// as "00012345"), or text that differs from stored values only in spaces.
// Each eq or in filter is checked alone against the whole table, with
// bound values and small limits; the first finding is the hint.
func (s *Store) hint(ctx context.Context, p *Plan) (string, error) {
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
		h, err := s.hintFor(ctx, p.Table, c, values)
		if err != nil || h != "" {
			return h, err
		}
	}
	return "", nil
}

// hintFor looks for a filter's values in another form: numbers as text
// that equals them as a number, else the column's form; text as stored
// text that differs only in case and spaces.
func (s *Store) hintFor(ctx context.Context, t *Table, c *Column, values []any) (string, error) {
	col := quoteIdent(c.Key)
	from := ` FROM data.` + quoteIdent(t.ID) + ` WHERE `
	var number json.Number
	for _, v := range values {
		switch x := v.(type) {
		case json.Number:
			number = x
			near, err := s.distinct(ctx, col, from+`TRY_CAST(`+col+` AS DOUBLE) = CAST(? AS DOUBLE)`, x.String())
			if err != nil || len(near) > 0 {
				verb := "equal"
				if len(near) == 1 {
					verb = "equals"
				}
				return fmt.Sprintf("%s is text; %s matched nothing, but %s %s it as a number: filter on the text.",
					c.Key, x, quoteList(near), verb), err
			}
		case string:
			near, err := s.distinct(ctx, col, from+`regexp_replace(lower(`+col+`), '\s+', '', 'g') = regexp_replace(lower(?), '\s+', '', 'g')`, x)
			if err != nil || len(near) > 0 {
				return fmt.Sprintf("no %s equals %q; near values (ignoring case and spaces): %s.", c.Key, x, quoteList(near)), err
			}
		}
	}
	if number == "" {
		return "", nil
	}
	sample, err := s.distinct(ctx, col, from+col+` IS NOT NULL`)
	if err != nil || len(sample) == 0 {
		return "", err
	}
	return fmt.Sprintf("%s is text; values look like %s. Send the value as text in that form.", c.Key, quoteList(sample[:1])), nil
}

// distinct returns up to maxHintValues distinct values of col.
func (s *Store) distinct(ctx context.Context, col, fromWhere string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT `+col+fromWhere+` ORDER BY 1 LIMIT `+fmt.Sprint(maxHintValues), args...)
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
