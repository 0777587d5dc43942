package engine

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"datadesk"
	"datadesk/engine/typing"
)

// shapeValues are values at the edges of every shape the classifiers
// count; each column of the test holds one group.
var shapeValues = [][]string{
	{"1", "-20", "300", "0", "-0", "+5", "007", "-007", "5.", ".5", "+.5", "1.50", "-0.25", "007.1", "123456789012345", "1234567890123456", "12345678901234567890", "2958465", "2958466", "12345678", " 42 ", "\t7\n", "\u00a08\u00a0"},
	{"true", "FALSE", "True", "yes", "t", "", "true ", " false", "  "},
	{"1,234", "1,234.56", "1,234,567", "12,34", "0,123", "1,23", "$1,234.56", "-$3.00", "$-3.00", "- 5", "$ -3", "-$-3", "12.50 €", "€3", "£ 4", "¥500", "USD 12.50", "12 EUR", "USD12", "$12 USD", "12%", "-3%", "12.5 %", "$12%", "(45.00)", "($3.50)", "$(3.50)", "(45.00", "45.00)", "(-45)", "(3 €)", "1.5E+03", "3.6e-05", "1e400", "1e300", "1,234e5", "05e3", "(1e2)", "$0012", "1,234,567,890,123,456", "$", "%", "()", "USD", "EURO 5", "1 234"},
	{"2024-01-31", "2024-02-30", "2024-01-31 10:00", "2024-01-31T10:00:00", "2024-01-31 10:00:00.123456", "2024-01-31 10:00:00.1234567", "2024-01-31 24:00", "2024-01-31 10:60", "2024-01-31T10:00:00Z", "2024-01-31T10:00Z", "2024-01-31 10:00:00+02:00", "2024-01-31 10:00:00+0200", "2024-01-31 10:00:00-05", "2024-01-31 10:00:00+05:", "2024-01-31 10:00:00+15", "2024-01-31 10:00:00.5-0530", "2024-01-31X", "2024-1-31"},
	{"3/14/2025", "14/3/2025", "03/04/2025", "1/1/2025", "31/31/2025", "29/2/2023", "29/2/2024", "1.2.2025", "31.12.2024", "2025/3/14", "2025/02/30", "1/2.2025", "1/1/25", "001/1/2025", "12/12/12345", "0/1/2025"},
	{"+44 20 7946 0958", "(555) 123-4567", "+(1) 555", "555-1234", "1/2", "12.34.56", "(", "+", "-5 5"},
	{"Zoë", "text", "N/A", "a1", "1a", "€", "ABC 12", "", "  "},
}

// TestSameCountsBothPaths counts every group of shapeValues in Go and in
// the SQL pass: the counts, and so every decision, must be the same.
func TestSameCountsBothPaths(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE shapes (c1 VARCHAR)`); err != nil {
		t.Fatal(err)
	}
	for i, group := range shapeValues {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, err := conn.ExecContext(ctx, `DELETE FROM shapes`); err != nil {
				t.Fatal(err)
			}
			var goStats typing.Stats
			for _, v := range group {
				if _, err := conn.ExecContext(ctx, `INSERT INTO shapes VALUES (?)`, v); err != nil {
					t.Fatal(err)
				}
				goStats.Add(v)
			}
			sqlStats, err := sqlCounts(ctx, conn, "shapes", 1)
			if err != nil {
				t.Fatal(err)
			}
			want, got := goStats.Counts(), sqlStats[0].Counts()
			maps.DeleteFunc(want, func(_ string, v int64) bool { return v == 0 })
			maps.DeleteFunc(got, func(_ string, v int64) bool { return v == 0 })
			if maps.Equal(got, want) {
				return
			}
			{
				for k := range maps.Keys(want) {
					if got[k] != want[k] {
						t.Errorf("%s: SQL %d, Go %d", k, got[k], want[k])
					}
				}
				for k := range maps.Keys(got) {
					if _, ok := want[k]; !ok {
						t.Errorf("%s: SQL %d, Go 0", k, got[k])
					}
				}
			}
			// Value by value, to name the ones that differ.
			for _, v := range group {
				var one typing.Stats
				one.Add(v)
				if _, err := conn.ExecContext(ctx, `DELETE FROM shapes`); err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(ctx, `INSERT INTO shapes VALUES (?)`, v); err != nil {
					t.Fatal(err)
				}
				sq, err := sqlCounts(ctx, conn, "shapes", 1)
				if err != nil {
					t.Fatal(err)
				}
				w, g := one.Counts(), sq[0].Counts()
				maps.DeleteFunc(w, func(_ string, v int64) bool { return v == 0 })
				maps.DeleteFunc(g, func(_ string, v int64) bool { return v == 0 })
				if !maps.Equal(g, w) {
					t.Errorf("%q: SQL %v, Go %v", v, g, w)
				}
			}
		})
	}
}
