package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

func newEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Config{Dir: t.TempDir(), MemoryLimit: "256MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func acquire(t *testing.T, e *Engine, owner string) *Store {
	t.Helper()
	s, release, err := e.Acquire(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return s
}

func tempBytes(t *testing.T, s *Store, content string) string {
	t.Helper()
	p := filepath.Join(s.IncomingDir(), datadesk.NewID("up"))
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ask plans and runs q on s, failing the test on an error of either.
func ask(t *testing.T, s *Store, q catalog.Query) *catalog.QueryResult {
	t.Helper()
	p, err := s.Plan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func rowsSource(name string, header []string, rows [][]string) TableSource {
	return TableSource{Name: name, Header: header, Rows: func(yield func([]string) error) (RowStats, error) {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return RowStats{}, err
			}
		}
		return RowStats{}, nil
	}}
}

func TestInferTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []string
		hint   typing.Hint
		want   string
		ident  bool
	}{
		{"integers", []string{"1", "-20", "300", ""}, typing.Hint{}, typing.TypeInteger, false},
		{"leading zeros", []string{"1", "00123"}, typing.Hint{}, typing.TypeText, true},
		{"negative leading zero", []string{"5", "-007"}, typing.Hint{}, typing.TypeText, true},
		{"decimal leading zero", []string{"5.5", "007.1"}, typing.Hint{}, typing.TypeText, true},
		{"twenty digits", []string{"12345678901234567890"}, typing.Hint{}, typing.TypeText, true},
		{"sixteen digits", []string{"1234567890123456"}, typing.Hint{}, typing.TypeText, true},
		{"fifteen digits", []string{"123456789012345"}, typing.Hint{}, typing.TypeInteger, false},
		{"decimals", []string{"1.50", "2", "-0.25"}, typing.Hint{}, typing.TypeDecimal, false},
		{"booleans", []string{"true", "FALSE"}, typing.Hint{}, typing.TypeBoolean, false},
		{"iso dates", []string{"2024-01-31", "1999-12-01"}, typing.Hint{}, typing.TypeDate, false},
		{"iso timestamps", []string{"2024-01-31 10:00:00", "2024-01-31T11:30"}, typing.Hint{}, typing.TypeTimestamp, false},
		{"day first", []string{"31/01/2024", "01/02/2024"}, typing.Hint{}, typing.TypeDate, false},
		{"ambiguous", []string{"01/02/2024", "03/04/2024"}, typing.Hint{}, typing.TypeText, false},
		{"phones", []string{"+44 20 7946 0958", "(555) 123-4567"}, typing.Hint{}, typing.TypeText, true},
		{"mixed", []string{"1", "n/a"}, typing.Hint{}, typing.TypeText, false},
		{"json strings", []string{"1", "2"}, typing.Hint{NoNumbers: true}, typing.TypeText, false},
		{"serial dates", []string{"45306", "45307"}, typing.Hint{DateSerial: true}, typing.TypeDate, false},
		{"serial times", []string{"45306.5"}, typing.Hint{DateSerial: true}, typing.TypeTimestamp, false},
		{"empty", []string{"", ""}, typing.Hint{}, typing.TypeText, false},
	}
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rows [][]string
			for _, v := range tc.values {
				rows = append(rows, []string{v})
			}
			src := rowsSource("t", []string{"value"}, rows)
			src.Hints = []typing.Hint{tc.hint}
			f, err := s.AddFile(context.Background(), NewFile{Filename: "x.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{src}})
			if err != nil {
				t.Fatal(err)
			}
			c := f.Tables[0].Columns[0]
			if c.Type != tc.want || c.Identifier != tc.ident {
				t.Errorf("got %s identifier=%v (%s), want %s identifier=%v", c.Type, c.Identifier, c.Reason, tc.want, tc.ident)
			}
		})
	}
}

func TestIdentifierNames(t *testing.T) {
	for key, want := range map[string]bool{
		"id": true, "customer_id": true, "zip": true, "zip_code": true, "order_number": true, "phone": true,
		"account": true, "account_balance": false, "number_of_items": false, "code_count": false, "quantity": false,
		"paid": false, "cell_count": false,
	} {
		if got := typing.HasIdentifierWord(key); got != want {
			t.Errorf("%s: got %v, want %v", key, got, want)
		}
	}
}

func TestPostcodesAfterSample(t *testing.T) {
	// The first 25,000 postcodes have no leading zero, later ones do: a
	// sampling sniffer would type the column as a number and drop the zeros.
	var rows [][]string
	for i := 0; i < 25000; i++ {
		rows = append(rows, []string{fmt.Sprintf("%05d", 10000+i%80000)})
	}
	for i := 0; i < 100; i++ {
		rows = append(rows, []string{fmt.Sprintf("%05d", 1000+i)})
	}
	e := newEngine(t)
	s := acquire(t, e, datadesk.NewID("u"))
	f, err := s.AddFile(context.Background(), NewFile{Filename: "p.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("p", []string{"postcode"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := f.Tables[0]
	if tbl.Columns[0].Type != typing.TypeText {
		t.Fatalf("got %s, want text", tbl.Columns[0].Type)
	}
	p, err := s.Rows(context.Background(), tbl.ID, catalog.PageRequest{Offset: 25000, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Rows[0][0]; got != "01000" {
		t.Errorf("got %v, want 01000", got)
	}
}

// TestAcquireUnderChurn: owners are closed for room, closed on request and
// opened again while other calls for them come and go; every call finds its
// store open and its table there, and the cap holds once calls stop.
func TestAcquireUnderChurn(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Dir: t.TempDir(), MaxOpen: 2, MemoryLimit: "256MB", MaxTempSize: "1GB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	owners := make([]string, 8)
	tables := make([]string, len(owners))
	for i := range owners {
		owners[i] = datadesk.NewID("u")
		s, release, err := e.Acquire(ctx, owners[i])
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.AddFile(ctx, NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource("t", []string{"n"}, [][]string{{strconv.Itoa(i)}})}})
		release()
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = f.Tables[0].ID
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 60 {
				i := rng.IntN(len(owners))
				if w == 0 {
					if err := e.CloseOwner(ctx, owners[i]); err != nil {
						errs <- err
					}
					continue
				}
				s, release, err := e.Acquire(ctx, owners[i])
				if err != nil {
					errs <- err
					continue
				}
				p, err := s.Plan(ctx, catalog.Query{FileID: tables[i], Aggregates: []catalog.Aggregate{{Op: "sum", Column: "n"}}})
				var res *catalog.QueryResult
				if err == nil {
					res, err = s.Run(ctx, p)
				}
				release()
				if err != nil {
					errs <- fmt.Errorf("owner %d: %w", i, err)
				} else if got := fmt.Sprint(res.Aggregates["sum_n"]); got != strconv.Itoa(i) {
					errs <- fmt.Errorf("owner %d: sum %s", i, got)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.OpenCount() > 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.OpenCount(); n > 2 {
		t.Errorf("%d owners open once idle, want at most 2", n)
	}
}

// TestDirectoryTakenOnce: a second Engine on the same data directory is
// refused while the first has it, and allowed once it is closed.
func TestDirectoryTakenOnce(t *testing.T) {
	dir := t.TempDir()
	e, err := New(Config{Dir: dir, MemoryLimit: "128MB"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Dir: dir, MemoryLimit: "128MB"}); datadesk.ErrorCode(err) != datadesk.Conflict {
		t.Errorf("second engine: got %v, want a conflict", err)
	}
	e.Close()
	e2, err := New(Config{Dir: dir, MemoryLimit: "128MB"})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	e2.Close()
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GB": 1e9, "512MiB": 512 << 20, "2.5 GB": 2.5e9, "100kb": 1e5, "64": 64, "1 TiB": 1 << 40} {
		if got, err := ParseSize("size", in); err != nil || got != want {
			t.Errorf("%q: got %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "-1GB", "1 parsec", "80%", "1e3"} {
		if _, err := ParseSize("size", in); datadesk.ErrorCode(err) != datadesk.Invalid {
			t.Errorf("%q: got %v, want invalid", in, err)
		}
	}
}

// TestCatalogOfWideTable records a table of more columns than one
// statement of the catalog writes, and reads every column's row back as
// it was loaded, in order.
func TestCatalogOfWideTable(t *testing.T) {
	t.Parallel()
	s := acquire(t, newEngine(t), datadesk.NewID("u"))
	const width = 2*columnsPerInsert + 88
	header := make([]string, width)
	rows := make([][]string, 20)
	for i := range header {
		header[i] = fmt.Sprintf("Column %d", i)
	}
	for r := range rows {
		rows[r] = make([]string, width)
		for i := range rows[r] {
			rows[r][i] = []string{strconv.Itoa(r * i), fmt.Sprintf("%06d", r+i), "word " + strconv.Itoa(r%3), fmt.Sprintf("2024-03-%02d", 1+r)}[i%4]
		}
	}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "wide.csv", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{rowsSource("wide", header, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	want := f.Tables[0].Columns
	got, err := s.db.QueryContext(context.Background(), `SELECT ordinal, key, label, type, identifier, reason, digits FROM dd_columns WHERE table_id = ? ORDER BY ordinal`, f.Tables[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	n := 0
	for ; got.Next(); n++ {
		var ordinal, digits int
		var c catalog.Column
		if err := got.Scan(&ordinal, &c.Key, &c.Label, &c.Type, &c.Identifier, &c.Reason, &digits); err != nil {
			t.Fatal(err)
		}
		c.Digits = catalog.Digits(digits)
		if n >= len(want) || ordinal != n {
			t.Fatalf("row %d of the catalog has ordinal %d of %d columns", n, ordinal, len(want))
		}
		w := want[n]
		if c.Key != w.Key || c.Label != w.Label || c.Type != w.Type || c.Identifier != w.Identifier || c.Reason != w.Reason || c.Digits != w.Digits {
			t.Errorf("column %d: recorded %+v, loaded %+v", n, c, w)
		}
	}
	if err := got.Err(); err != nil {
		t.Fatal(err)
	}
	if n != width || len(want) != width {
		t.Errorf("%d columns recorded, %d loaded, want %d", n, len(want), width)
	}
	if c := want[1]; c.Type != typing.TypeText || !c.Identifier || c.Digits != catalog.DigitsFixed {
		t.Errorf("zero-padded codes: %+v, want identifier text of fixed digits", c)
	}
}
