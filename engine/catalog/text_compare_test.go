package catalog

import (
	"strings"
	"testing"

	"datadesk"
)

// pricesTable is a sheet read with its units row as data: price is text
// of numbers, a label and a unit; name is text of words and a number;
// zip is zero-padded codes; city is words alone.
var pricesTable = &Table{ID: "t3", Columns: []Column{
	{Key: "price", Type: "text", Reason: "text: 2 of 5 values are not numbers"},
	{Key: "name", Type: "text", Reason: "text"},
	{Key: "zip", Type: "text", Identifier: true, Digits: DigitsFixed, Reason: "text: 3 values with leading zeros"},
	{Key: "year", Type: "integer"},
	{Key: "city", Type: "text", Reason: "text"},
}}

// TestTextComparedWithNumbers: a comparison with a number (a JSON number
// or text that is one) on a text column reads it as numbers; eq, ne and
// comparisons with text compare text; between takes two of one kind.
func TestTextComparedWithNumbers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		filter FilterNode
		number bool
		values string
	}{
		{"gt a number", FilterNode{Column: "price", Op: "gt", Value: num("100000")}, true, "[100000]"},
		{"lte a quoted number", FilterNode{Column: "price", Op: "lte", Value: " 10.5 "}, true, "[10.5]"},
		{"a quoted written number is text", FilterNode{Column: "price", Op: "lte", Value: "1,000"}, false, "[1,000]"},
		{"between numbers", FilterNode{Column: "price", Op: "between", Value: []any{num("1"), "2e3x"}}, false, ""},
		{"between two numbers", FilterNode{Column: "price", Op: "between", Value: []any{num("1"), "20"}}, true, "[1 20]"},
		{"between two texts", FilterNode{Column: "name", Op: "between", Value: []any{"A", "M"}}, false, "[A M]"},
		{"gt text", FilterNode{Column: "name", Op: "gt", Value: "M"}, false, "[M]"},
		{"eq a number stays text", FilterNode{Column: "price", Op: "eq", Value: num("10500")}, false, "[10500]"},
		{"a number of a numeric column", FilterNode{Column: "year", Op: "gt", Value: num("2000")}, false, "[2000]"},
		{"an identifier", FilterNode{Column: "zip", Op: "gte", Value: num("2000")}, true, "[2000]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := AnalysisFor(pricesTable, nil, Analysis{FileID: "t3", Filters: []FilterNode{c.filter}})
			if c.values == "" {
				e := datadesk.AsError(err)
				if err == nil || e.Field != "filters[0].value" || !strings.Contains(e.Message, "between takes two numbers") {
					t.Fatalf("got %v, want a refusal of one number and one text", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cond := p.Where.Conds[0]
			if cond.AsNumber != c.number || fmtValues(cond.Values) != c.values || cond.Field != "filters[0]" {
				t.Errorf("as number %v, values %s, field %s; want %v, %s, filters[0]", cond.AsNumber, fmtValues(cond.Values), cond.Field, c.number, c.values)
			}
		})
	}
}

func fmtValues(vs []any) string {
	var out []string
	for _, v := range vs {
		out = append(out, strings.TrimSpace(ValueText(v)))
	}
	return "[" + strings.Join(out, " ") + "]"
}
