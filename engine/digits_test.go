package engine

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// naturalLess is the natural order written plainly: values of digits
// alone by their number, then by their text, before every other value,
// which compare as text.
func naturalLess(a, b string) bool {
	digits := func(s string) (*big.Int, bool) {
		if s == "" || strings.Trim(s, "0123456789") != "" {
			return nil, false
		}
		n, _ := new(big.Int).SetString(s, 10)
		return n, true
	}
	na, da := digits(a)
	nb, db := digits(b)
	switch {
	case da && db:
		if c := na.Cmp(nb); c != 0 {
			return c < 0
		}
	case da != db:
		return da
	}
	return a < b
}

// TestNaturalLess: the reference order itself, as people number things.
func TestNaturalLess(t *testing.T) {
	values := []string{"10", "9", "100", "007", "7", "1", "2", "20", "B-1", "A-2"}
	slices.SortFunc(values, func(a, b string) int {
		if naturalLess(a, b) {
			return -1
		}
		if naturalLess(b, a) {
			return 1
		}
		return 0
	})
	if got := strings.Join(values, " "); got != "1 2 007 7 9 10 20 100 A-2 B-1" {
		t.Errorf("natural order %s", got)
	}
}

// TestIdentifierDigits: the load finds whether an identifier column's
// values are digits alone, of one length or of several, with a leading
// zero or none, and the column
// then orders as the natural order would without testing each value:
// on the page, in query_table's rows and groups, in analysis groups and
// in min and max, in both directions, and again once the catalog is read
// back.
func TestIdentifierDigits(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	long := strings.Repeat("1", 40)
	for _, tc := range []struct {
		name   string
		values []string
		want   catalog.Digits
		order  catalog.Ordering
	}{
		{"one length", []string{"0010", "0009", "0100", "0001", "", "0002", "0009"}, catalog.DigitsFixed, catalog.ByText},
		{"one length past 38", []string{long, strings.Repeat("0", 40), strings.Repeat("9", 40)}, catalog.DigitsFixed, catalog.ByText},
		{"several lengths", []string{"10", "9", "100", "007", "7", "1", "2", "20", "", "0"}, catalog.DigitsVarying, catalog.ByNumber},
		{"several lengths past 38", []string{"10", "9", long, "007"}, catalog.DigitsUnknown, catalog.ByNatural},
		{"several lengths, no leading zero", []string{"10", "9", "100", "7", "1", "", "0", "20", "9", strings.Repeat("9", 38)}, catalog.DigitsPlain, catalog.ByLength},
		{"several lengths past 38, no leading zero", []string{"10", "9", long, "7"}, catalog.DigitsUnknown, catalog.ByNatural},
		{"other characters", []string{"10", "9", "B-1", "A-2", "007"}, catalog.DigitsUnknown, catalog.ByNatural},
		{"no digits alone", []string{"INV-10", "INV-9", "", "A-2", "INV-009", "x7", "7a"}, catalog.DigitsNone, catalog.ByText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cells [][]string
			for _, v := range tc.values {
				cells = append(cells, []string{v, "1"})
			}
			f, err := s.AddFile(ctx, NewFile{Filename: "o.csv", TempPath: tempBytes(t, s, "x"),
				Tables: []TableSource{rowsSource("o", []string{"order_id", "qty"}, cells)}})
			if err != nil {
				t.Fatal(err)
			}
			read, err := s.Table(ctx, f.Tables[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []catalog.Column{f.Tables[0].Columns[0], read.Columns[0]} {
				if !c.Identifier || c.Digits != tc.want || c.Ordering() != tc.order {
					t.Fatalf("order_id: identifier %v, digits %d, ordering %d; want digits %d, ordering %d", c.Identifier, c.Digits, c.Ordering(), tc.want, tc.order)
				}
			}
			checkNaturalOrder(t, s, f, tc.values)
		})
	}
}

// checkNaturalOrder holds every ordered read of f's order_id to
// naturalLess, empty values last: the page, query_table's rows and
// groups, analysis groups, and min and max, on DuckDB or the cluster.
func checkNaturalOrder(t *testing.T, s *Store, f *catalog.File, values []string) {
	t.Helper()
	ctx := context.Background()
	var present []string
	nulls := 0
	for _, v := range values {
		if v == "" {
			nulls++
			continue
		}
		present = append(present, v)
	}
	slices.SortStableFunc(present, func(a, b string) int {
		switch {
		case naturalLess(a, b):
			return -1
		case naturalLess(b, a):
			return 1
		}
		return 0
	})
	asc := slices.Clone(present)
	desc := slices.Clone(present)
	slices.Reverse(desc)
	distinct := func(vs []string) []string { return slices.Compact(slices.Clone(vs)) }
	show := func(vs []string, n int) string {
		out := make([]any, 0, len(vs)+n)
		for _, v := range vs {
			out = append(out, v)
		}
		for range n {
			out = append(out, nil)
		}
		return fmt.Sprint(out)
	}
	col := func(rows [][]any) string {
		var out []any
		for _, r := range rows {
			out = append(out, r[0])
		}
		return fmt.Sprint(out)
	}
	emptyGroup := min(nulls, 1)
	for dir, want := range map[string][]string{"asc": asc, "desc": desc} {
		page, err := s.Rows(ctx, f.Tables[0].ID, catalog.PageRequest{Limit: 20, Sort: "order_id", Direction: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got := col(page.Rows); got != show(want, nulls) {
			t.Errorf("page %s: %s, want %s", dir, got, show(want, nulls))
		}
		for _, q := range []catalog.Query{
			{FileID: f.ID, Columns: []string{"order_id"}, SortBy: "order_id", Direction: dir, Limit: 20},
			{FileID: f.ID, GroupBy: []string{"order_id"}, SortBy: "order_id", Direction: dir, Limit: 20},
		} {
			res := ask(t, s, q)
			w := show(want, nulls)
			if q.GroupBy != nil {
				w = show(distinct(want), emptyGroup)
			}
			if got := col(res.Rows); got != w {
				t.Errorf("query %v %s: %s, want %s", q.GroupBy, dir, got, w)
			}
		}
		p, err := s.PlanAnalysis(ctx, catalog.Analysis{FileID: f.ID, GroupBy: []catalog.GroupBy{{Column: "order_id"}},
			Measures: []catalog.Measure{{Op: "count"}}, SortBy: "order_id", Direction: dir, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Analyze(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := col(res.Rows), show(distinct(want), emptyGroup); got != w {
			t.Errorf("analysis %s: %s, want %s", dir, got, w)
		}
	}
	p, err := s.PlanAnalysis(ctx, catalog.Analysis{FileID: f.ID, Measures: []catalog.Measure{{Op: "min", Column: "order_id"}, {Op: "max", Column: "order_id"}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Analyze(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := fmt.Sprint(res.Rows), fmt.Sprintf("[[%s %s]]", asc[0], asc[len(asc)-1]); got != w {
		t.Errorf("min and max: %s, want %s", got, w)
	}
	// A column's summary: the groups, most frequent first, asked for
	// the column's bounds.
	br := askBounds(t, s, f.ID, nil, "order_id")
	if got, w := fmt.Sprint(br.First, " ", br.Last), fmt.Sprint(asc[0], " ", asc[len(asc)-1]); got != w {
		t.Errorf("bounds of the groups: %s, want %s", got, w)
	}
}

// TestDigitsFromTheLoad: an identifier column the direct load finds all
// digits takes its digits (one length, a leading zero or none) from the
// load's facts, as reading the stored values finds them, with values of
// another length or a leading zero only past the first rows the plan is
// made from.
func TestDigitsFromTheLoad(t *testing.T) {
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	const rows = 10000 // past the sample
	for _, tc := range []struct {
		name string
		id   func(i int) string
		want catalog.Digits
	}{
		{"one length", func(i int) string { return fmt.Sprintf("%08d", i) }, catalog.DigitsFixed},
		{"one length, some empty", func(i int) string {
			if i%7 == 0 {
				return ""
			}
			return fmt.Sprintf("%06d", i)
		}, catalog.DigitsFixed},
		{"longer past the sample", func(i int) string {
			if i == rows-1 {
				return "0123456789"
			}
			return fmt.Sprintf("%05d", i)
		}, catalog.DigitsVarying},
		{"several lengths, no leading zero", func(i int) string { return strconv.Itoa(i + 1) }, catalog.DigitsPlain},
		{"a leading zero past the sample", func(i int) string {
			if i == rows-1 {
				return "0042"
			}
			return strconv.Itoa(i + 1)
		}, catalog.DigitsVarying},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("customer_id,qty\n")
			for i := range rows {
				fmt.Fprintf(&b, "%s,%d\n", tc.id(i), i%5)
			}
			path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
			if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := s.AddFile(ctx, NewFile{Filename: "d.csv", TempPath: path, Tables: []TableSource{csvSourceOf(t, path, true)}})
			if err != nil {
				t.Fatal(err)
			}
			read, err := s.Table(ctx, f.Tables[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			c := read.Columns[0]
			if c.Type != typing.TypeText || !c.Identifier {
				t.Fatalf("customer_id is %s, identifier %v", c.Type, c.Identifier)
			}
			// The stored values, read again.
			again := *read
			again.Columns = slices.Clone(read.Columns)
			again.Columns[0].Digits = catalog.DigitsUnknown
			conn, err := s.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := s.measureDigits(ctx, conn, &again); err != nil {
				t.Fatal(err)
			}
			if c.Digits != tc.want || again.Columns[0].Digits != tc.want {
				t.Errorf("digits %d from the load, %d from the stored values; want %d", c.Digits, again.Columns[0].Digits, tc.want)
			}
		})
	}
}
