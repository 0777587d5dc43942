package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"datadesk/engine/typing"
)

// MaxHintValues bounds the near values a hint shows.
const MaxHintValues = 3

// How a hint looks for a filter's value in a text column.
const (
	// NearNumber finds text that equals the value as a number.
	NearNumber = "number"
	// NearText finds text equal to the value ignoring case and spaces.
	NearText = "text"
	// NearAny finds any value, as a sample of the column's form.
	NearAny = "any"
)

// NearFunc returns up to MaxHintValues distinct values of column c of t,
// sorted, that match value the way kind says (NearNumber, NearText,
// NearAny; value is unused for NearAny).
type NearFunc func(ctx context.Context, t *Table, c *Column, kind, value string) ([]string, error)

// RunFunc answers a checked plan without a hint of its own.
type RunFunc func(ctx context.Context, p *Plan) (*QueryResult, error)

// NoMatchHint says, for a query that matched nothing, how a filter on a text
// column may have missed: a JSON number against text (an id 12345 stored
// as "00012345"), or text that differs from stored values only in spaces.
// A filter is blamed only when it alone matches nothing (run answers that,
// when other filters or a search share the query), and never with a value
// equal to the one it gave. Each eq or in filter is checked against the
// whole table, with small limits, through near (the table's DuckDB file or
// its backend); the first finding is the hint.
func NoMatchHint(ctx context.Context, p *Plan, near NearFunc, run RunFunc) (string, error) {
	return noMatchHint(ctx, p, len(p.Query.Filters) == 1 && p.Search == nil, near, run)
}

// AnalysisHint is NoMatchHint for an analysis that matched nothing: the
// filters it may blame are its top-level eq and in conditions on the
// table's own columns, each checked alone unless it is the only condition.
func AnalysisHint(ctx context.Context, p *AnalysisPlan, near NearFunc, run RunFunc) (string, error) {
	var fs []Filter
	for _, n := range p.Analysis.Filters {
		if n.Column != "" && !strings.HasPrefix(n.Column, LookupPrefix) && (n.Op == "eq" || n.Op == "in") {
			fs = append(fs, Filter{Column: n.Column, Op: n.Op, Value: n.Value})
		}
	}
	if len(fs) == 0 {
		return "", nil
	}
	q, err := PlanFor(p.Table, Query{FileID: p.Analysis.FileID, Filters: fs})
	if err != nil {
		// A value query_table would not take has no hint of its form.
		return "", nil
	}
	return noMatchHint(ctx, q, len(p.Analysis.Filters) == 1, near, run)
}

// noMatchHint looks for the hint of plan p's filters; alone says p's only
// filter is the whole query, which then needs no run of its own.
func noMatchHint(ctx context.Context, p *Plan, alone bool, near NearFunc, run RunFunc) (string, error) {
	for _, f := range p.Query.Filters {
		if f.Op != "eq" && f.Op != "in" {
			continue
		}
		c, ok := p.Table.Lookup(f.Column)
		if !ok || c.Type != typing.TypeText {
			continue
		}
		if !alone {
			matched, err := matchesAlone(ctx, p, f, run)
			if err != nil || matched {
				if err != nil {
					return "", err
				}
				continue
			}
		}
		values := []any{f.Value}
		if list, ok := f.Value.([]any); ok {
			values = list
		}
		h, err := hintFor(ctx, p.Table, &c, values, near)
		if err != nil || h != "" {
			return h, err
		}
	}
	return "", nil
}

// matchesAlone reports whether filter f of p alone matches some row.
func matchesAlone(ctx context.Context, p *Plan, f Filter, run RunFunc) (bool, error) {
	one, err := PlanFor(p.Table, Query{FileID: p.Query.FileID, Filters: []Filter{f}})
	if err != nil {
		return false, err
	}
	res, err := run(ctx, one)
	if err != nil {
		return false, err
	}
	return res.MatchedRowCount > 0, nil
}

// hintFor looks for a filter's values in another form: numbers as text
// that equals them as a number, else the column's form; text as stored
// text that differs only in case and spaces.
func hintFor(ctx context.Context, t *Table, c *Column, values []any, near NearFunc) (string, error) {
	var number json.Number
	for _, v := range values {
		switch x := v.(type) {
		case json.Number:
			number = x
			found, err := near(ctx, t, c, NearNumber, x.String())
			found = without(found, func(s string) bool { return s == x.String() })
			if err != nil || len(found) > 0 {
				verb := "equal"
				if len(found) == 1 {
					verb = "equals"
				}
				return fmt.Sprintf("%s is text; %s matched nothing, but %s %s it as a number: filter on the text.",
					c.Key, x, quoteList(found), verb), err
			}
		case string:
			found, err := near(ctx, t, c, NearText, x)
			// eq compares ignoring case: a value equal so is no other form.
			found = without(found, func(s string) bool { return strings.ToLower(s) == strings.ToLower(x) })
			if err != nil || len(found) > 0 {
				return fmt.Sprintf("no %s equals %q; near values (ignoring case and spaces): %s.", c.Key, x, quoteList(found)), err
			}
		}
	}
	if number == "" {
		return "", nil
	}
	sample, err := near(ctx, t, c, NearAny, "")
	if err != nil || len(sample) == 0 {
		return "", err
	}
	return fmt.Sprintf("%s is text; values look like %s. Send the value as text in that form.", c.Key, quoteList(sample[:1])), nil
}

// without returns vs without the values drop reports.
func without(vs []string, drop func(string) bool) []string {
	out := vs[:0:0]
	for _, v := range vs {
		if !drop(v) {
			out = append(out, v)
		}
	}
	return out
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
