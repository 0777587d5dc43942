package catalog

import (
	"context"
	"slices"
	"strings"
	"testing"

	"datadesk"
)

var pricesValues = map[string][]string{
	"t3.price": {"Price", "£", "9927.77", "10500", "250000", ""},
	"t3.name":  {"Ann", "Bob", "Cy", "7", ""},
	"t3.city":  {"York", "Leeds", "Bath", "Leeds"},
	"t2.pop":   {"83", "n/a"},
}

// fakeRun answers the plans CheckTextUses runs over pricesValues: the
// values of a column, or the distinct ones that are not numbers.
func fakeRun(asked *int) RunFunc {
	return func(_ context.Context, p *Plan) (*QueryResult, error) {
		*asked++
		col := p.Conds[0].Col.Key
		res := &QueryResult{}
		var others []string
		for _, v := range pricesValues[p.Table.ID+"."+col] {
			if v == "" {
				continue
			}
			if len(p.Conds) == 1 {
				res.MatchedRowCount++
			} else if !numberForm.MatchString(v) {
				res.MatchedRowCount++
				others = append(others, v)
			}
		}
		slices.Sort(others)
		others = slices.Compact(others)
		distinct := int64(len(others))
		res.GroupCount = &distinct
		for _, v := range others[:min(len(others), p.Limit)] {
			res.Rows = append(res.Rows, []any{v, int64(1)})
		}
		return res, nil
	}
}

// TestTextUsesJudged: each use of a text column where numbers are meant
// is refused with what the column holds and how to read the file again,
// or answered with a note saying how many values were not numbers.
func TestTextUsesJudged(t *testing.T) {
	t.Parallel()
	gt := func(col string, v any) []FilterNode { return []FilterNode{{Column: col, Op: "gt", Value: v}} }
	cases := []struct {
		name  string
		a     Analysis
		field string // the refusal's, or "" for an answer
		says  string // the refusal's message, or the note
		runs  int
	}{
		{"numbers among units", Analysis{Filters: gt("price", num("10000"))}, "",
			`filters[0]: "price" is text, so gt compared its values that are numbers, as numbers; 2 of its 5 values are not numbers ("Price", "£") ` +
				`and match no number; the import found 2 of 5 values are not numbers. If those are header or units rows, ` + ReadAgain, 2},
		{"no number among words", Analysis{Filters: []FilterNode{{Any: []FilterNode{{Column: "year", Op: "eq", Value: num("1")}, {Column: "city", Op: "lt", Value: "0"}}}}},
			"filters[0].any[1].value", `lt with a number compares numbers, and none of the 4 values of "city" is a number ("Bath", "Leeds", "York"); ` +
				`compare text with a text value that is not a number, or use eq, in, contains or starts_with; if the column should hold numbers, ` + ReadAgain, 2},
		{"max of mostly numbers", Analysis{Measures: []Measure{{Op: "max", Column: "price"}}}, "measures[0].column",
			`max of "price" would order text, where "9" comes after "10": "price" is text, though 3 of its 5 values are numbers; 2 are not ("Price", "£"; ` +
				`the import found 2 of 5 values are not numbers). To make the column numeric, ` + ReadAgain, 2},
		{"min of words", Analysis{Measures: []Measure{{Op: "min", Column: "name"}}}, "",
			`min of "name" is in text order, where "9" comes after "10": 1 of its 4 values is a number, ordered as text`, 2},
		{"sort by a group of mostly numbers", Analysis{GroupBy: []GroupBy{{Column: "price"}}, SortBy: "price", Direction: "desc"}, "sort_by",
			`sort_by "price" would order text`, 2},
		{"a filter and a max, counted once", Analysis{Filters: gt("price", "1"), Measures: []Measure{{Op: "max", Column: "price"}}}, "measures[0].column",
			`max of "price" would order text`, 2},
		{"zero-padded codes are numbers", Analysis{Filters: gt("zip", num("2000")), Measures: []Measure{{Op: "max", Column: "zip"}}}, "", "", 0},
		{"a lookup column", Analysis{Filters: gt("lookup.pop", "50"), Lookup: &Lookup{FileID: "t2", On: []LookupJoin{{Column: "name", LookupColumn: "region"}}}}, "",
			`filters[0]: "pop" is text, so gt compared its values that are numbers, as numbers; 1 of its 2 values is not a number ("n/a")`, 2},
	}
	lookup := &Table{ID: "t2", Columns: []Column{{Key: "region", Type: "text"}, {Key: "pop", Type: "text"}}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.a.FileID = "t3"
			p, err := AnalysisFor(pricesTable, lookup, c.a)
			if err != nil {
				t.Fatal(err)
			}
			runs := 0
			notes, err := CheckTextUses(context.Background(), p.TextUses(), fakeRun(&runs))
			if runs != c.runs {
				t.Errorf("ran %d plans, want %d", runs, c.runs)
			}
			if c.field != "" {
				e := datadesk.AsError(err)
				if err == nil || e.Code != datadesk.Invalid || e.Field != c.field || !strings.Contains(e.Message, c.says) {
					t.Fatalf("got %v (field %q), want invalid at %s saying %s", err, e.Field, c.field, c.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.says == "" && len(notes) > 0 || c.says != "" && (len(notes) != 1 || !strings.HasPrefix(notes[0], c.says)) {
				t.Errorf("notes %q, want one starting %q", notes, c.says)
			}
		})
	}
}

// TestTextRefusedAtOnce: a having comparison of a text measure with a
// number, and a numeric measure of a text column, are refused as they
// are checked, saying how to read the file again.
func TestTextRefusedAtOnce(t *testing.T) {
	t.Parallel()
	_, err := AnalysisFor(pricesTable, nil, Analysis{FileID: "t3", GroupBy: []GroupBy{{Column: "year"}},
		Measures: []Measure{{Op: "max", Column: "name"}}, Having: []Having{{Measure: "max_name", Op: "gt", Value: num("5")}}})
	if e := datadesk.AsError(err); err == nil || e.Field != "having[0].value" || !strings.Contains(e.Message, "max_name is text (max of a text column, in text order") {
		t.Errorf("having: got %v", err)
	}
	_, err = AnalysisFor(pricesTable, nil, Analysis{FileID: "t3", Measures: []Measure{{Op: "median", Column: "price"}}})
	if e := datadesk.AsError(err); err == nil || e.Field != "measures[0].column" ||
		!strings.Contains(e.Message, `"price" is text (the import found 2 of 5 values are not numbers); if its values are numbers, `+ReadAgain) {
		t.Errorf("median: got %v", err)
	}
	_, err = PlanFor(pricesTable, Query{FileID: "t3", Aggregates: []Aggregate{{Op: "max", Column: "price"}}})
	if e := datadesk.AsError(err); err == nil || e.Field != "aggregates[0].column" || !strings.Contains(e.Message, ReadAgain) {
		t.Errorf("query_table max: got %v", err)
	}
}

// TestQueryTextUses: files.query_table's comparisons with numbers and its
// sorts by text columns are judged; a sort by an identifier keeps its
// natural order.
func TestQueryTextUses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q    Query
		want string
	}{
		{Query{Filters: []Filter{{Column: "price", Op: "gte", Value: num("1")}}, SortBy: "name"}, "filters[0] gte price, sort_by sort_by name"},
		{Query{GroupBy: []string{"price"}, SortBy: "price"}, "sort_by sort_by price"},
		{Query{SortBy: "zip"}, ""},
		{Query{GroupBy: []string{"price"}, SortBy: "count"}, ""},
	} {
		c.q.FileID = "t3"
		p, err := PlanFor(pricesTable, c.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range p.TextUses() {
			got = append(got, u.Field+" "+u.What+" "+u.Col.Key)
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("%+v: uses %q, want %q", c.q, got, c.want)
		}
	}
}
