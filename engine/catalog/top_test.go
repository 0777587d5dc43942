package catalog

import (
	"fmt"
	"testing"
)

// TestTopListsGroupsByRank: top per group lists each combination of its
// per groups together, its groups by rank (top's measure, in top's
// direction), then by the other groups; a sort_by comes first.
func TestTopListsGroupsByRank(t *testing.T) {
	t.Parallel()
	groups := []GroupBy{{Column: "region"}, {Column: "day", Bucket: "month"}}
	ms := []Measure{{Op: "count"}, {Op: "sum", Column: "amount"}}
	cases := []struct {
		name string
		a    Analysis
		want string
	}{
		{"by rank, highest first", Analysis{Top: &Top{N: 2, Per: []string{"region"}, By: "sum_amount"}}, "[{0 false} {3 true} {1 false}]"},
		{"lowest first", Analysis{Top: &Top{N: 2, Per: []string{"region"}, By: "count", Direction: "asc"}}, "[{0 false} {2 false} {1 false}]"},
		{"per the second group", Analysis{Top: &Top{N: 1, Per: []string{"day_month"}, By: "count"}}, "[{1 false} {2 true} {0 false}]"},
		{"sort_by first", Analysis{SortBy: "day_month", Direction: "desc", Top: &Top{N: 2, Per: []string{"region"}, By: "count"}},
			"[{1 true} {0 false} {2 true}]"},
		{"top.by from sort_by", Analysis{SortBy: "sum_amount", Direction: "desc", Top: &Top{N: 2, Per: []string{"region"}}},
			"[{3 true} {0 false} {1 false}]"},
		{"no top: the groups", Analysis{}, "[{0 false} {1 false}]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.a.FileID, c.a.GroupBy, c.a.Measures = "t1", groups, ms
			p, err := AnalysisFor(ordersTable, nil, c.a)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(p.Sort); got != c.want {
				t.Errorf("sort %s, want %s", got, c.want)
			}
		})
	}
}
