package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// TestWrittenForms runs one table per written form: accepted (a number or
// date, with the values read), refused (text, with why) and ambiguous
// (text, with why).
func TestWrittenForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		form, name string
		key        string
		values     []string
		want       string   // type
		stored     []string // the values as rows answer them, by fmt %v
		reason     string   // a part of the report's reason
		ident      bool
	}{
		{"scientific", "accepted as decimal", "yield", []string{"0.0175", "3.6e-05", "0.0231"}, typing.TypeDecimal,
			[]string{"0.017500", "0.000036", "0.023100"}, "scientific notation", false},
		{"scientific", "accepted as double", "ratio", []string{"1.5E+03", "2.5e300"}, typing.TypeDouble, []string{"1500", "2.5e+300"}, "written like", false},
		{"scientific", "refused beyond a double", "ratio", []string{"1.5", "1e999"}, typing.TypeText, nil, "1 of 2 values are not numbers", false},
		{"scientific", "identifier name wins", "product_id", []string{"1.2E+05", "130000"}, typing.TypeText, nil, "identifiers", true},
		{"thousands", "accepted", "amount", []string{"1,234.56", "12.50", "1,000,000"}, typing.TypeDecimal,
			[]string{"1234.56", "12.50", "1000000.00"}, "thousands separators were dropped", false},
		{"thousands", "accepted as integer", "people", []string{"1,234", "1,234,567"}, typing.TypeInteger, []string{"1234", "1234567"}, "thousands separators", false},
		{"thousands", "refused: bad groups", "amount", []string{"1,23", "1,234"}, typing.TypeText, nil, "text", false},
		{"thousands", "ambiguous", "amount", []string{"1,234", "5,678"}, typing.TypeText, nil, "could be a thousands separator or a decimal comma", false},
		{"thousands", "leading zero wins", "amount", []string{"1,234", "0012"}, typing.TypeText, nil, "leading zero", true},
		{"thousands", "more than 15 digits wins", "amount", []string{"1,234,567,890,123,456"}, typing.TypeText, nil, "more than 15 significant digits", true},
		{"currency", "accepted before", "price", []string{"$1,234.56", "$12.50", "-$3.00"}, typing.TypeDecimal,
			[]string{"1234.56", "12.50", "-3.00"}, "decimal: 3 values written like $1,234.56; the currency sign $ and thousands separators were dropped", false},
		{"currency", "accepted after and ISO", "price", []string{"12.50 €", "3 €"}, typing.TypeDecimal, []string{"12.50", "3.00"}, "currency sign €", false},
		{"currency", "accepted ISO code", "price", []string{"USD 12.50", "USD 1,000"}, typing.TypeDecimal, []string{"12.50", "1000.00"}, "USD", false},
		{"currency", "refused: two currencies", "price", []string{"$12.50", "€3.00"}, typing.TypeText, nil, "more than one currency", false},
		{"currency", "ambiguous separators", "price", []string{"$1,234", "$5,678"}, typing.TypeText, nil, "could be a thousands separator or a decimal comma", false},
		{"percent", "ambiguous separators", "share", []string{"1,234%", "5,678%"}, typing.TypeText, nil, "could be a thousands separator or a decimal comma", false},
		{"accounting", "ambiguous separators", "balance", []string{"(1,234)", "5,678"}, typing.TypeText, nil, "could be a thousands separator or a decimal comma", false},
		{"percent", "accepted as fractions", "share", []string{"12%", "12.5%", "-3%"}, typing.TypeDecimal, []string{"0.120", "0.125", "-0.030"}, "percentages are stored as fractions", false},
		{"percent", "refused: mixed", "share", []string{"12%", "0.5"}, typing.TypeText, nil, "percent sign and the others do not", false},
		{"accounting", "accepted", "balance", []string{"(45.00)", "120.10", "($3.50)"}, typing.TypeDecimal, []string{"-45.00", "120.10", "-3.50"}, "values in parentheses are negative", false},
		{"accounting", "refused: sign inside", "balance", []string{"(-45.00)", "1"}, typing.TypeText, nil, "not numbers", false},
		{"day/month", "month first, short parts", "day", []string{"3/14/2025", "12/1/2025"}, typing.TypeDate, []string{"2025-03-14", "2025-12-01"}, "month/day/year", false},
		{"day/month", "day first, short parts", "day", []string{"14/3/2025", "1/12/2025"}, typing.TypeDate, []string{"2025-03-14", "2025-12-01"}, "day/month/year", false},
		{"day/month", "ambiguous, not an identifier", "day", []string{"3/4/2025", "1/2/2025"}, typing.TypeText, nil, "cannot be told apart", false},
		{"day/month", "refused: no such day", "day", []string{"31/31/2025", "1/2/2025"}, typing.TypeText, nil, "codes", true},
		{"day.month", "accepted", "day", []string{"1.2.2025", "31.12.2024"}, typing.TypeDate, []string{"2025-02-01", "2024-12-31"}, "day.month.year", false},
		{"day.month", "refused: no such month", "day", []string{"1.13.2025", "31.12.2024"}, typing.TypeText, nil, "codes", true},
		{"year/month", "refused: no such day", "day", []string{"2025/2/30", "2024/12/01"}, typing.TypeText, nil, "codes", true},
		{"year/month", "accepted", "day", []string{"2025/3/14", "2024/12/01"}, typing.TypeDate, []string{"2025-03-14", "2024-12-01"}, "year/month/day", false},
		{"time", "fractional seconds", "at", []string{"2024-03-01 10:00:00.123456", "2024-03-01T10:00"}, typing.TypeTimestamp,
			[]string{"2024-03-01T10:00:00.123456", "2024-03-01T10:00:00"}, "ISO dates and times", false},
		{"time", "zones to UTC", "at", []string{"2024-03-01T10:00:00.5Z", "2024-03-01 10:00:00+02:00", "2024-03-01 10:00:00-0530"}, typing.TypeTimestamp,
			[]string{"2024-03-01T10:00:00.5", "2024-03-01T08:00:00", "2024-03-01T15:30:00"}, "stored in UTC", false},
		{"time", "refused: zone on some", "at", []string{"2024-03-01T10:00:00Z", "2024-03-01 10:00:00"}, typing.TypeText, nil, "have a time zone and the others do not", false},
		{"time", "refused: zone without seconds", "at", []string{"2024-03-01T10:00Z"}, typing.TypeText, nil, "text", false},
		{"time", "refused: nanoseconds", "at", []string{"2024-03-01T10:00:00.123456789"}, typing.TypeText, nil, "text", false},
	}
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.form+"/"+tc.name, func(t *testing.T) {
			var rows [][]string
			for _, v := range tc.values {
				rows = append(rows, []string{v})
			}
			f, err := s.AddFile(ctx, NewFile{Filename: "x.csv", TempPath: tempBytes(t, s, "x"),
				Tables: []TableSource{rowsSource("t", []string{tc.key}, rows)}})
			if err != nil {
				t.Fatal(err)
			}
			c := f.Tables[0].Columns[0]
			if c.Type != tc.want || c.Identifier != tc.ident || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("got %s identifier=%v %q, want %s identifier=%v with %q", c.Type, c.Identifier, c.Reason, tc.want, tc.ident, tc.reason)
			}
			if tc.stored == nil {
				tc.stored = tc.values // text keeps every value as written
			}
			p, err := s.Rows(ctx, f.Tables[0].ID, catalog.PageRequest{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.stored {
				if got := fmt.Sprint(p.Rows[i][0]); got != want {
					t.Errorf("row %d: got %s, want %s", i, got, want)
				}
			}
		})
	}
}

// TestLateValues puts the one value that decides a column after 25,000
// rows, past any sample: a late 09645 keeps the postcode column text with
// its zero, a late 3.6e-05 keeps the yield column numeric. Both through
// the Go row stream and through a CSV file read by DuckDB, whose direct
// load proposes types from its first rows and must prove them on these.
func TestLateValues(t *testing.T) {
	var rows [][]string
	var b strings.Builder
	b.WriteString("postcode,yield\n")
	for i := 0; i < 25000; i++ {
		rows = append(rows, []string{fmt.Sprintf("%05d", 10000+i), fmt.Sprintf("0.%04d", 100+i%9000)})
		fmt.Fprintf(&b, "%s,%s\n", rows[i][0], rows[i][1])
	}
	rows = append(rows, []string{"09645", "3.6e-05"})
	b.WriteString("09645,3.6e-05\n")
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	ctx := context.Background()
	path := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]TableSource{
		"rows": rowsSource("late", []string{"postcode", "yield"}, rows),
		"csv":  csvSourceOf(t, path, true),
	} {
		t.Run(name, func(t *testing.T) {
			f, err := s.AddFile(ctx, NewFile{Filename: "late.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
			if err != nil {
				t.Fatal(err)
			}
			cols := f.Tables[0].Columns
			if cols[0].Type != typing.TypeText || !cols[0].Identifier {
				t.Errorf("postcode: got %s identifier=%v, want text identifier", cols[0].Type, cols[0].Identifier)
			}
			if cols[1].Type != typing.TypeDecimal {
				t.Errorf("yield: got %s (%s), want decimal", cols[1].Type, cols[1].Reason)
			}
			p, err := s.Rows(ctx, f.Tables[0].ID, catalog.PageRequest{Offset: 25000, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(p.Rows[0]); got != "[09645 0.000036]" {
				t.Errorf("got %s, want [09645 0.000036]", got)
			}
		})
	}
}
