package tableview

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

var orders = &catalog.Table{ID: "t_abcdefghijklmnopqrstuvwxyz", Columns: []catalog.Column{
	{Key: "id", Type: "text"}, {Key: "region", Type: "text"}, {Key: "amount", Type: "decimal"}, {Key: "day", Type: "date"}, {Key: "paid", Type: "boolean"},
}}

func parse(t *testing.T, q string, mode Mode) *View {
	t.Helper()
	vals, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Parse(orders, vals, mode)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// TestEncodeHoldsOnlyWhatIsSet: a page's form sends every field, empty or
// not; the address written back holds the set ones, reads back to the
// same view, and a filter of three conditions stays short.
func TestEncodeHoldsOnlyWhatIsSet(t *testing.T) {
	form := "sort=&dir=&q=&o.id=contains&f.id=&o.region=eq&f.region=North&t.region=&o.region=contains&f.region=&t.region=" +
		"&o.amount=between&f.amount=10&t.amount=60&o.amount=eq&f.amount=&t.amount=&o.day=gte&f.day=2024-01-01&t.day=" +
		"&o.paid=eq&f.paid=&col=id&col=region&col=amount&col=day&col=paid"
	v := parse(t, form, ForPage)
	got := v.Href("/tables/" + orders.ID)
	want := "/tables/" + orders.ID + "?o.region=eq&f.region=North&o.amount=between&f.amount=10&t.amount=60&o.day=gte&f.day=2024-01-01"
	if got != want {
		t.Errorf("address\n got %s\nwant %s", got, want)
	}
	if len(got) >= 200 {
		t.Errorf("a three-condition filter's address has %d characters, want under 200", len(got))
	}
	for _, q := range []string{
		strings.SplitN(got, "?", 2)[1],
		"q=acme&f.region=North&o.amount=ne&f.amount=5&o.amount=between&t.amount=&t.amount=9&o.amount=is_blank&sort=amount&dir=desc",
		"f.amount=1&o.amount=&o.amount=is_blank&o.amount=between&f.amount=&f.amount=3&t.amount=&t.amount=&t.amount=4&hide=day&summary=region&summary=amount",
		"col=amount&col=id&g=day&gb=month&gm=sum&gc=amount&offset=100",
	} {
		v := parse(t, q, ForPage)
		again := parse(t, v.Encode(), ForAPI)
		again.Message = v.Message
		if !reflect.DeepEqual(v, again) {
			t.Errorf("%s: read back from %s as\n %+v\nwant %+v", q, v.Encode(), again, v)
		}
		if enc := again.Encode(); enc != v.Encode() {
			t.Errorf("%s: written %s, then %s", q, v.Encode(), enc)
		}
	}
}

// TestParseRefuses: the API answers an unknown or unusable parameter with
// the parameter named and what is allowed, never the unfiltered table.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ q, field, says string }{
		{"o.nope=eq&f.nope=1", "f.nope", "names no column"},
		{"f.Region=North", "f.Region", "did you mean f.region"},
		{"region=North", "region", `unknown parameter "region"`},
		{"msg=hi", "msg", "unknown parameter"},
		{"o.region=eq", "f.region", "has no value"},
		{"o.amount=contains&f.amount=5", "o.amount", "does not take"},
		{"o.amount=gt&f.amount=5&t.amount=9", "t.amount", "upper bound of between"},
		{"offset=-3", "offset", "whole number"},
		{"limit=5000", "limit", "from 1 to 1000"},
		{"dir=up", "dir", "asc or desc"},
		{"q=a&q=b", "q", "taken once"},
		{"hide=id&hide=region&hide=amount&hide=day&hide=paid", "hide", "every column is hidden"},
		{"col=id&col=id", "col", "shown twice"},
		{"summary=nope", "summary", "no column"},
	} {
		vals, _ := url.ParseQuery(tc.q)
		_, err := Parse(orders, vals, ForAPI)
		e := datadesk.AsError(err)
		if err == nil || e.Code != datadesk.Invalid || e.Field != tc.field || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: got %v (field %q), want invalid on %s saying %q", tc.q, err, e.Field, tc.field, tc.says)
		}
	}
	_, err := Parse(orders, url.Values{"region": {"North"}}, ForAPI)
	if allowed := datadesk.AsError(err).Allowed; len(allowed) == 0 || allowed[0] != "q" {
		t.Errorf("the allowed parameters: %q", allowed)
	}
}

// TestFiltersInColumnOrder: conditions become a plan's filters in the
// table's column order, with the place each came from.
func TestFiltersInColumnOrder(t *testing.T) {
	v := parse(t, "o.day=lte&f.day=2024-12-31&f.region=no&o.amount=between&f.amount=1&t.amount=2&o.amount=in&f.amount=3,+4&o.paid=is_blank", ForAPI)
	fs, at := v.Filters()
	want := []catalog.Filter{{Column: "region", Op: "contains", Value: "no"}, {Column: "amount", Op: "between", Value: []any{"1", "2"}},
		{Column: "amount", Op: "in", Value: []any{"3", "4"}}, {Column: "day", Op: "lte", Value: "2024-12-31"}, {Column: "paid", Op: "is_blank", Value: true}}
	if !reflect.DeepEqual(fs, want) {
		t.Errorf("filters %v, want %v", fs, want)
	}
	if at[2] != [2]int{2, 1} {
		t.Errorf("the third filter's place %v, want column 2, condition 1", at[2])
	}
	if p := v.Param("filters[2].value[0]"); p != "f.amount" {
		t.Errorf("the parameter of filters[2]: %q", p)
	}
}
