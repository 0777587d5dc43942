package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"datadesk/answers"
	"datadesk/api"
	"datadesk/api/apitest"
	"datadesk/engine/catalog"
	"datadesk/engine/ducksql"
)

// BenchmarkCallOwnCost measures what a tool call costs beside its query:
// files.query_table counting a two-row table over HTTP with keep-alive,
// and in the same turns the statement that call runs, on the owner's own
// DuckDB connection, and GET /healthz. Reported as medians in
// microseconds: call, statement, own (call less statement), healthz;
// cached is the same call answered from the answers' cache.
func BenchmarkCallOwnCost(b *testing.B) {
	cache := answers.New(1 << 20)
	ts := apitest.New(b, apitest.Options{Config: api.Config{MaxUpload: 1 << 20}, Answers: cache})
	token := ts.AddUser("ana", "analyst")
	code, up := ts.Upload(token, "two.csv", []byte("region,amount\nNorth,10\nSouth,5\n"))
	if code != http.StatusCreated {
		b.Fatalf("upload: %d %v", code, up)
	}
	fileID := up["file"].(map[string]any)["id"].(string)
	user, err := ts.Users.ByName("ana")
	if err != nil {
		b.Fatal(err)
	}
	store, release, err := ts.Engine.Acquire(context.Background(), user.ID)
	if err != nil {
		b.Fatal(err)
	}
	defer release()

	var calls, cached, statements, health []float64
	timed := func(into *[]float64, f func()) {
		start := time.Now()
		f()
		*into = append(*into, float64(time.Since(start).Microseconds()))
	}
	n := 0
	for b.Loop() {
		n++
		// A filter of its own each turn keeps the call from the cache.
		args := map[string]any{"file_id": fileID, "aggregates": []any{map[string]any{"op": "count", "name": "n"}},
			"filters": []any{map[string]any{"column": "amount", "op": "ne", "value": -n}}}
		timed(&calls, func() {
			if code, m := ts.Call(token, "files.query_table", args); code != http.StatusOK {
				b.Fatalf("call: %d %v", code, m)
			}
		})
		timed(&cached, func() {
			if code, m := ts.Call(token, "files.query_table", args); code != http.StatusOK || m["result"].(map[string]any)["cached"] != true {
				b.Fatalf("call again: %d %v", code, m)
			}
		})
		// The statement the call runs, planned as the call plans it.
		raw, _ := json.Marshal(args)
		var q catalog.Query
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&q); err != nil {
			b.Fatal(err)
		}
		plan, err := store.Plan(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		statement, params := ducksql.Query(plan)
		timed(&statements, func() {
			if _, err := store.Drain(context.Background(), statement, params...); err != nil {
				b.Fatal(err)
			}
		})
		timed(&health, func() {
			if code, _ := ts.Get("", "/healthz"); code != http.StatusOK {
				b.Fatalf("healthz: %d", code)
			}
		})
	}
	call, stmt := median(calls), median(statements)
	b.ReportMetric(call, "call-µs")
	b.ReportMetric(stmt, "statement-µs")
	b.ReportMetric(call-stmt, "own-µs")
	b.ReportMetric(median(cached), "cached-µs")
	b.ReportMetric(median(health), "healthz-µs")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkCallFromCache is a files.query_table call over HTTP answered
// from the answers' cache: 20 groups of a 2,000-row table, asked again and
// again.
func BenchmarkCallFromCache(b *testing.B) {
	ts := apitest.New(b, apitest.Options{Config: api.Config{MaxUpload: 1 << 20}, Answers: answers.New(1 << 20)})
	token := ts.AddUser("ana", "analyst")
	var csv bytes.Buffer
	csv.WriteString("region,category,amount\n")
	for i := range 2000 {
		fmt.Fprintf(&csv, "R%d,C%d,%d.%02d\n", i%5, i%4, i, i%100)
	}
	code, up := ts.Upload(token, "orders.csv", csv.Bytes())
	if code != http.StatusCreated {
		b.Fatalf("upload: %d %v", code, up)
	}
	args := map[string]any{"file_id": up["file"].(map[string]any)["id"], "group_by": []any{"region", "category"},
		"aggregates": []any{map[string]any{"op": "count"}, map[string]any{"op": "sum", "column": "amount"}}}
	if code, m := ts.Call(token, "files.query_table", args); code != http.StatusOK {
		b.Fatalf("call: %d %v", code, m)
	}
	for b.Loop() {
		if code, m := ts.Call(token, "files.query_table", args); code != http.StatusOK || m["result"].(map[string]any)["cached"] != true {
			b.Fatalf("call: %d %v", code, m)
		}
	}
}
