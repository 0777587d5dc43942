package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// benchRows is the size of the large benchmark table; set
// DATADESK_BENCH_ROWS=10000000 for the full run.
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("DATADESK_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// benchStore is a store of a new owner in an engine of its own, of
// memory limit (DuckDB's units).
func benchStore(b *testing.B, limit string) *Store {
	b.Helper()
	e, err := New(Config{Dir: b.TempDir(), MemoryLimit: limit})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	s, release, err := e.Acquire(context.Background(), datadesk.NewID("u"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(release)
	return s
}

func benchTable(b *testing.B, rows int) (*Store, *catalog.Table) {
	b.Helper()
	s := benchStore(b, "2GB")
	regions := []string{"North", "South", "East", "West", "Central"}
	src := TableSource{Name: "bench", Header: []string{"id", "region", "category", "qty", "amount", "day", "note"},
		Rows: func(yield func([]string) error) (RowStats, error) {
			row := make([]string, 7)
			for i := 0; i < rows; i++ {
				row[0] = fmt.Sprintf("%010d", i)
				row[1] = regions[i%5]
				row[2] = "cat" + strconv.Itoa(i%37)
				row[3] = strconv.Itoa(i % 50)
				row[4] = strconv.Itoa(i%100000) + "." + strconv.Itoa(10+i%90)
				row[5] = fmt.Sprintf("2024-%02d-%02d", 1+i%12, 1+i%28)
				row[6] = "note " + strconv.Itoa(i%1000)
				if err := yield(row); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		}}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "bench.csv", TempPath: tempBytes2(b, s), Tables: []TableSource{src}})
	if err != nil {
		b.Fatal(err)
	}
	return s, &f.Tables[0]
}

func tempBytes2(b *testing.B, s *Store) string {
	p := s.IncomingDir() + "/" + datadesk.NewID("up")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

var benchQueries = map[string]string{
	"count_filtered": `{"filters":[{"column":"region","op":"eq","value":"north"},{"column":"qty","op":"gte","value":10}]}`,
	"group1":         `{"group_by":["region"],"aggregates":[{"op":"count"},{"op":"sum","column":"amount"},{"op":"avg","column":"qty"},{"op":"max","column":"amount"}]}`,
	"group3":         `{"group_by":["region","category","qty"],"aggregates":[{"op":"count"},{"op":"sum","column":"amount"},{"op":"avg","column":"qty"},{"op":"max","column":"amount"}],"sort_by":"sum_amount","direction":"desc","limit":20}`,
	"contains":       `{"filters":[{"column":"note","op":"contains","value":"99"}]}`,
	"top20":          `{"columns":["id","amount"],"sort_by":"amount","direction":"desc","limit":20}`,
	"offset_100000":  `{"columns":["id","amount"],"limit":20,"offset":100000}`,
}

// BenchmarkQueryTable measures files.query_table (plan, one statement, and
// reading its answer) beside the same generated SQL run directly on the
// same database, in the same run. The ratio of the two is the overhead.
func BenchmarkQueryTable(b *testing.B) {
	for _, size := range []int{1000, benchRows()} {
		s, t := benchTable(b, size)
		for name, args := range benchQueries {
			var q catalog.Query
			dec := json.NewDecoder(stringsReader(args))
			dec.UseNumber()
			if err := dec.Decode(&q); err != nil {
				b.Fatal(err)
			}
			q.FileID = t.ID
			b.Run(fmt.Sprintf("rows=%d/%s/direct-sql", size, name), func(b *testing.B) {
				p, err := s.Plan(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				sql, params := ducksql.Query(p)
				for b.Loop() {
					rows, err := s.db.QueryContext(context.Background(), sql, params...)
					if err != nil {
						b.Fatal(err)
					}
					cols, _ := rows.Columns()
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					for rows.Next() {
						rows.Scan(ptrs...)
					}
					rows.Close()
				}
			})
			b.Run(fmt.Sprintf("rows=%d/%s/query_table", size, name), func(b *testing.B) {
				for b.Loop() {
					p, err := s.Plan(context.Background(), q)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Run(context.Background(), p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkBrowse compares the last page of a table with its first, in
// file order and sorted by a column, in the same run.
func BenchmarkBrowse(b *testing.B) {
	rows := benchRows()
	s, t := benchTable(b, rows)
	last := int64(rows - catalog.DefaultPageSize)
	for _, sort := range []string{"", "amount"} {
		name := "file-order"
		if sort != "" {
			name = "sorted"
		}
		for _, page := range []struct {
			name   string
			offset int64
		}{{"first", 0}, {"last", last}} {
			b.Run(fmt.Sprintf("rows=%d/%s/%s", rows, name, page.name), func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Rows(context.Background(), t.ID, catalog.PageRequest{Offset: page.offset, Sort: sort}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// randomTable stores rows of the benchmarks' synthetic orders (as
// bench.Row makes them): identifiers, a postcode, categories, random
// amounts and dates, two words of note. Unlike benchTable's, no column
// comes near its sorted order.
func randomTable(b *testing.B, rows int) (*Store, *catalog.Table) {
	b.Helper()
	s := benchStore(b, "1GB")
	regions := []string{"North", "South", "East", "West", "Central"}
	words := []string{"fast", "gift", "return", "fragile", "express", "bulk", "priority", "late", "wrapped", "sample"}
	src := TableSource{Name: "orders", Header: []string{"order_id", "customer_zip", "region", "category", "quantity", "amount", "order_date", "note"},
		Rows: func(yield func([]string) error) (RowStats, error) {
			row := make([]string, 8)
			for i := range rows {
				r := rand.New(rand.NewPCG(uint64(i), 42))
				row[0], row[1] = fmt.Sprintf("%010d", i), fmt.Sprintf("%05d", r.IntN(99999))
				row[2], row[3] = regions[r.IntN(5)], "cat"+strconv.Itoa(r.IntN(8))
				row[4], row[5] = strconv.Itoa(1+r.IntN(20)), fmt.Sprintf("%d.%02d", r.IntN(5000), r.IntN(100))
				row[6] = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(1800)).Format("2006-01-02")
				row[7] = words[r.IntN(10)] + " " + words[r.IntN(10)]
				if err := yield(row); err != nil {
					return RowStats{}, err
				}
			}
			return RowStats{}, nil
		}}
	f, err := s.AddFile(context.Background(), NewFile{Filename: "orders.csv", TempPath: tempBytes2(b, s), Tables: []TableSource{src}})
	if err != nil {
		b.Fatal(err)
	}
	return s, &f.Tables[0]
}

// BenchmarkDeepPage reads pages in the middle of a sorted or filtered
// table (offset 500,000 of 1,000,000 sorted by amount, the page that
// took longest) through Store.Rows beside the hand-written statement
// that sorts every column and skips with OFFSET, in the same run.
// store-order is what the first deep page of an order pays once, to
// store the table's order.
func BenchmarkDeepPage(b *testing.B) {
	rows := benchRows()
	s, t := randomTable(b, rows)
	north := []catalog.Filter{{Column: "region", Op: "eq", Value: "North"}}
	most := []catalog.Filter{{Column: "quantity", Op: "gte", Value: json.Number("2")}}
	for _, tc := range []struct {
		name string
		req  catalog.PageRequest
	}{
		{"sorted-amount", catalog.PageRequest{Offset: int64(rows / 2), Sort: "amount"}},
		{"sorted-amount-desc", catalog.PageRequest{Offset: int64(rows / 2), Sort: "amount", Direction: "desc"}},
		{"sorted-note", catalog.PageRequest{Offset: int64(rows / 2), Sort: "note"}},
		{"filtered-sorted-amount", catalog.PageRequest{Offset: int64(rows / 10), Sort: "amount", Filters: north}},
		{"filtered-file-order", catalog.PageRequest{Offset: int64(rows / 10), Filters: north}},
		{"most-rows-sorted-amount", catalog.PageRequest{Offset: int64(rows * 45 / 100), Sort: "amount", Filters: most}},
	} {
		b.Run(fmt.Sprintf("rows=%d/%s/datadesk", rows, tc.name), func(b *testing.B) {
			// The first deep page of an order stores it (store-order
			// below): read once before the clock.
			if _, err := s.Rows(context.Background(), t.ID, tc.req); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.Rows(context.Background(), t.ID, tc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("rows=%d/%s/hand-written", rows, tc.name), func(b *testing.B) {
			p, err := catalog.PagePlanFor(t, tc.req)
			if err != nil {
				b.Fatal(err)
			}
			count, page, params := handWritten(p)
			for b.Loop() {
				var total int64
				if err := s.db.QueryRow(count, params...).Scan(&total); err != nil {
					b.Fatal(err)
				}
				if _, err := s.pageRows(context.Background(), t, page, append(params, p.Limit, p.Offset)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run(fmt.Sprintf("rows=%d/store-order-amount", rows), func(b *testing.B) {
		p, err := catalog.PagePlanFor(t, catalog.PageRequest{Sort: "amount"})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := s.db.Exec(`DROP TABLE IF EXISTS ` + ducksql.OrderSchema + `.` + ducksql.Ident(ducksql.OrderIndexName(p))); err != nil {
				b.Fatal(err)
			}
			if _, err := s.db.Exec(ducksql.OrderIndex(p)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
