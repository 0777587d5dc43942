package catalog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var ordersTable = &Table{ID: "t1", Columns: []Column{
	{Key: "day", Type: "date"},
	{Key: "region", Type: "text"},
	{Key: "amount", Type: "double"},
	{Key: "qty", Type: "integer"},
}}

// chain is the finding's measures: a0 = count/count, and each a_i the
// previous one used uses times.
func chain(depth, uses int) []Measure {
	ms := []Measure{{Op: "count"}, {Name: "a0", Expr: "count/count"}}
	for i := 1; i <= depth; i++ {
		prev := make([]string, uses)
		for j := range prev {
			prev[j] = fmt.Sprintf("a%d", i-1)
		}
		ms = append(ms, Measure{Name: fmt.Sprintf("a%d", i), Expr: strings.Join(prev, "*")})
	}
	return ms
}

// TestMeasureChecksAreLinear: measures that use each other many times are
// checked in time linear in what is written (each measure is walked once),
// and their levels put each measure one stage after what it reads.
func TestMeasureChecksAreLinear(t *testing.T) {
	for _, c := range []struct{ depth, uses int }{{2, 16}, {7, 16}, {14, 3}, {14, 16}} {
		t.Run(fmt.Sprintf("%dx%d", c.depth, c.uses), func(t *testing.T) {
			start := time.Now()
			p, err := AnalysisFor(ordersTable, nil, Analysis{FileID: "t1", Measures: chain(c.depth, c.uses)})
			if err != nil {
				t.Fatal(err)
			}
			levels := p.ExprLevels()
			if d := time.Since(start); d > time.Second {
				t.Errorf("checking took %v, want well under a second", d)
			}
			if len(levels) != c.depth+1 {
				t.Errorf("got %d levels, want %d", len(levels), c.depth+1)
			}
		})
	}
}

// TestMeasureCycles: a measure that reaches itself is refused wherever the
// loop closes, and a measure used by many others is not a cycle.
func TestMeasureCycles(t *testing.T) {
	cases := []struct {
		name     string
		measures []Measure
		want     bool
	}{
		{"self", []Measure{{Name: "a", Expr: "a+1"}}, true},
		{"pair", []Measure{{Op: "count"}, {Name: "a", Expr: "b+count"}, {Name: "b", Expr: "a*2"}}, true},
		{"ring of three", []Measure{{Name: "a", Expr: "b"}, {Name: "b", Expr: "c"}, {Name: "c", Expr: "a"}}, true},
		{"diamond", []Measure{{Op: "count"}, {Name: "a", Expr: "count*2"}, {Name: "b", Expr: "a+1"}, {Name: "c", Expr: "a-1"}, {Name: "d", Expr: "b/c"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := AnalysisFor(ordersTable, nil, Analysis{FileID: "t1", Measures: c.measures})
			if got := err != nil; got != c.want {
				t.Fatalf("refused = %v (%v), want %v", got, err, c.want)
			}
		})
	}
}
