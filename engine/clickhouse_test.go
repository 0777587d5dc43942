package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
	"datadesk/engine/typing"
)

// Extra columns of the equivalence table: sub-second timestamps, which
// ClickHouse 18.16 has no type for, and text that tests the literal
// escaper.
var (
	equivHeader = append(append([]string(nil), oracleHeader...), "at", "label", "ratio")
	equivLabels = []string{"O'Brien", `back\slash`, "tab\there", "Ünïcode ÄÖ", "line\nbreak", "%_like", `'; DROP TABLE x; --`, "MiXeD"}
)

func equivCells(rows []oracleRow, rng *rand.Rand) [][]string {
	var cells [][]string
	base := time.Date(2023, 12, 30, 23, 59, 0, 0, time.UTC)
	for i, r := range rows {
		at, label := "", ""
		if rng.IntN(6) > 0 {
			ts := base.Add(time.Duration(rng.IntN(200000)) * time.Second).Add(time.Duration(rng.IntN(4)*rng.IntN(1000000)) * time.Microsecond)
			at = ts.Format("2006-01-02 15:04:05.999999")
		}
		if rng.IntN(5) > 0 {
			label = equivLabels[rng.IntN(len(equivLabels))]
		}
		// Fifteen integer digits beside 27 decimals fit no DECIMAL(38,s):
		// the column is a double.
		ratio := strconv.FormatFloat(float64(rng.IntN(2000000)-1000000)/10000, 'f', -1, 64)
		switch rng.IntN(40) {
		case 0:
			ratio = "123456789012345"
		case 1:
			ratio = "-98765432109876"
		case 2, 3, 4, 5:
			ratio = ""
		}
		switch i {
		case 0:
			ratio = "0.000000000000000000000000125"
		case 1:
			ratio = "123456789012345"
		}
		cells = append(cells, append(r.cells(), at, label, ratio))
	}
	return cells
}

// equivQuery is randomQuery with, now and then, conditions and sorts on
// the extra columns.
func equivQuery(rng *rand.Rand, rows []oracleRow, cells [][]string) catalog.Query {
	q := randomQuery(rng, rows)
	cell := func(col int) string { return cells[rng.IntN(len(cells))][col] }
	if rng.IntN(4) == 0 {
		f := catalog.Filter{Column: "at", Op: []string{"eq", "ne", "gt", "gte", "lt", "lte", "contains", "is_null", "in"}[rng.IntN(9)]}
		v := cell(7)
		if v == "" || rng.IntN(3) == 0 {
			v = "2024-01-01"
		}
		if len(v) > 19 && f.Op != "contains" {
			v = v[:19]
		}
		switch f.Op {
		case "is_null":
			f.Value = rng.IntN(2) == 0
		case "in":
			f.Value = []any{v, "2024-01-02 00:00:00"}
		case "contains":
			f.Value = v[rng.IntN(len(v)/2):]
		default:
			f.Value = v
		}
		q.Filters = append(q.Filters, f)
	}
	if rng.IntN(4) == 0 {
		f := catalog.Filter{Column: "label", Op: []string{"eq", "ne", "contains", "in", "gt", "lt"}[rng.IntN(6)]}
		v := equivLabels[rng.IntN(len(equivLabels))]
		if rng.IntN(2) == 0 {
			v = strings.ToUpper(v)
		}
		switch f.Op {
		case "in":
			f.Value = []any{v, equivLabels[rng.IntN(len(equivLabels))]}
		case "contains":
			r := []rune(v)
			f.Value = string(r[:1+rng.IntN(len(r)-1)])
		default:
			f.Value = v
		}
		q.Filters = append(q.Filters, f)
	}
	if rng.IntN(4) == 0 {
		// Any op but contains: a double's text differs between the two
		// (100.0 and 1e+20 in DuckDB, 100 and 1e20 in ClickHouse).
		f := catalog.Filter{Column: "ratio", Op: []string{"eq", "ne", "gt", "gte", "lt", "lte", "in", "is_null"}[rng.IntN(8)]}
		v := json.Number(cell(9))
		if v == "" {
			v = "0.5"
		}
		switch f.Op {
		case "is_null":
			f.Value = rng.IntN(2) == 0
		case "in":
			f.Value = []any{v, json.Number(cell(9) + "0"), json.Number("12.5")}
		default:
			f.Value = v
		}
		if f.Op == "in" && cell(9) == "" {
			f.Value = []any{v}
		}
		q.Filters = append(q.Filters, f)
	}
	// A grouped query without aggregates counts, and may sort by count.
	if rng.IntN(5) == 0 && len(q.Aggregates) < 8 && (len(q.GroupBy) == 0 || len(q.Aggregates) > 0) {
		op := []string{"sum", "avg", "min", "max", "count"}[rng.IntN(5)]
		q.Aggregates = append(q.Aggregates, catalog.Aggregate{Op: op, Column: "ratio", Name: op + "_of_ratio"})
	}
	if rng.IntN(6) == 0 {
		// Search every text column for a piece of a label, in any case.
		r := []rune(equivLabels[rng.IntN(len(equivLabels))])
		from := rng.IntN(len(r) - 1)
		q.Search = string(r[from : from+1+rng.IntN(len(r)-from-1)])
		if rng.IntN(2) == 0 {
			q.Search = strings.ToUpper(q.Search)
		}
	}
	if len(q.GroupBy) == 0 && q.SortBy != "" && rng.IntN(3) == 0 {
		q.SortBy = []string{"at", "label", "ratio"}[rng.IntN(3)]
	}
	if len(q.GroupBy) > 0 && len(q.GroupBy) < 3 && rng.IntN(4) == 0 {
		q.GroupBy = append(q.GroupBy, "label")
	}
	return q
}

// sameValue compares two cells; floats to a relative 1e-9, since a sum of
// doubles depends on the order the shards add them in.
func sameValue(a, b any) bool {
	x, okA := a.(float64)
	y, okB := b.(float64)
	if okA && okB {
		return math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
	}
	return fmt.Sprintf("%T %v", norm(a), norm(a)) == fmt.Sprintf("%T %v", norm(b), norm(b))
}

// sameResult compares two answers by value.
func sameResult(a, b *catalog.QueryResult) string {
	switch {
	case a.MatchedRowCount != b.MatchedRowCount:
		return fmt.Sprintf("matched %d vs %d", a.MatchedRowCount, b.MatchedRowCount)
	case (a.GroupCount == nil) != (b.GroupCount == nil) || a.GroupCount != nil && *a.GroupCount != *b.GroupCount:
		return fmt.Sprintf("groups %v vs %v", a.GroupCount, b.GroupCount)
	case (a.HasMore == nil) != (b.HasMore == nil) || a.HasMore != nil && *a.HasMore != *b.HasMore:
		return fmt.Sprintf("has_more %v vs %v", fmt.Sprint(a.HasMore != nil && *a.HasMore), fmt.Sprint(b.HasMore != nil && *b.HasMore))
	case fmt.Sprint(a.Columns) != fmt.Sprint(b.Columns):
		return fmt.Sprintf("columns %v vs %v", a.Columns, b.Columns)
	case len(a.Rows) != len(b.Rows) || (a.Rows == nil) != (b.Rows == nil):
		return fmt.Sprintf("rows %d vs %d", len(a.Rows), len(b.Rows))
	case len(a.Aggregates) != len(b.Aggregates):
		return fmt.Sprintf("aggregates %v vs %v", a.Aggregates, b.Aggregates)
	case a.Hint != b.Hint:
		return fmt.Sprintf("hint %q vs %q", a.Hint, b.Hint)
	}
	for k, v := range a.Aggregates {
		if !sameValue(v, b.Aggregates[k]) {
			return fmt.Sprintf("aggregate %s: %#v vs %#v", k, v, b.Aggregates[k])
		}
	}
	for i := range a.Rows {
		for j := range a.Rows[i] {
			if !sameValue(a.Rows[i][j], b.Rows[i][j]) {
				return fmt.Sprintf("row %d col %d: %#v vs %#v\n%v\n%v", i, j, a.Rows[i][j], b.Rows[i][j], a.Rows[i], b.Rows[i])
			}
		}
	}
	return ""
}

// TestClickHouseEquivalence loads one generated table into DuckDB and into
// a two-shard ClickHouse cluster and checks that random query_table calls,
// pages and a full scan answer identically on both; then it moves the
// table back and compares every value with the DuckDB original.
func TestClickHouseEquivalence(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(17, 29))
	rows := genOracleRows(3000, rng)
	cells := equivCells(rows, rng)
	e := newClusterEngine(t, ch, 0)
	s := acquire(t, e, datadesk.NewID("u"))
	add := func() *catalog.File {
		f, err := s.AddFile(ctx, NewFile{Filename: "o.csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource("o", equivHeader, cells)}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	local, remote := add(), add()
	if got := local.Tables[0].Columns[7].Type; got != typing.TypeTimestamp {
		t.Fatalf("at typed %s, want timestamp", got)
	}
	if got := local.Tables[0].Columns[9].Type; got != typing.TypeDouble {
		t.Fatalf("ratio typed %s, want double", got)
	}
	moved, err := s.MoveTable(ctx, remote.Tables[0].ID, catalog.LocationClickHouse)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Location != catalog.LocationClickHouse {
		t.Fatalf("location %q after the move, want clickhouse", moved.Location)
	}
	onShards, err := ch.ShardRows(ctx, moved)
	if err != nil {
		t.Fatal(err)
	}
	if onShards[0] == 0 || onShards[1] == 0 || onShards[0]+onShards[1] != int64(len(cells)) {
		t.Errorf("rows per shard %v, want both shards used and %d in all", onShards, len(cells))
	}

	// The queries are drawn first, in order, so that a seed names them
	// all; three callers ask them, as each waits on the servers more than
	// it computes.
	const queries = 500
	qs := make([]catalog.Query, queries)
	for n := range qs {
		qs[n] = equivQuery(rng, rows, cells)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 3 {
		wg.Go(func() {
			for n := range next {
				sameQueryOnBoth(t, s, qs[n], n, local.ID, remote.ID)
			}
		})
	}
	for n := range qs {
		if t.Failed() {
			break
		}
		next <- n
	}
	close(next)
	wg.Wait()
	// Hints of queries that match nothing: text in another case or with
	// other spaces, and a number against text.
	for _, f := range []catalog.Filter{{Column: "label", Op: "eq", Value: "o' BRIEN"}, {Column: "label", Op: "in", Value: []any{"mi XeD", "x"}},
		{Column: "label", Op: "eq", Value: json.Number("12")}, {Column: "label", Op: "eq", Value: "ünïcodeäö"}} {
		var hints []string
		for _, id := range []string{local.ID, remote.ID} {
			hints = append(hints, ask(t, s, catalog.Query{FileID: id, Filters: []catalog.Filter{f}}).Hint)
		}
		if hints[0] == "" || hints[0] != hints[1] {
			t.Errorf("hint of %+v: duckdb %q, clickhouse %q", f, hints[0], hints[1])
		}
	}

	for _, req := range []catalog.PageRequest{
		{Limit: 7, Offset: 2990},
		{Limit: 25, Offset: 100, Sort: "amount", Direction: "desc"},
		{Limit: 40, Offset: 1500, Sort: "at"},
		{Limit: 30, Sort: "label", Filters: []catalog.Filter{{Column: "region", Op: "eq", Value: "NORTH"}}},
		{Limit: 50, Offset: 10, Sort: "day", Filters: []catalog.Filter{{Column: "note", Op: "contains", Value: "BOX"}}},
		{Limit: 20, Offset: 5, Search: "o'b"},
		{Limit: 30, Sort: "at", Direction: "desc", Search: "ÄÖ", Filters: []catalog.Filter{{Column: "amount", Op: "gt", Value: json.Number("10")}}},
		{Limit: 10, Offset: 2000, Search: "e"},
	} {
		a, err := s.Rows(ctx, local.Tables[0].ID, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Rows(ctx, remote.Tables[0].ID, req)
		if err != nil {
			t.Fatal(err)
		}
		if a.Total != b.Total || a.HasMore != b.HasMore || fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) {
			t.Errorf("page %+v differs:\nduckdb     %d %v\nclickhouse %d %v", req, a.Total, a.Rows, b.Total, b.Rows)
		}
	}
	for _, bad := range []catalog.PageRequest{{Limit: catalog.MaxPageSize + 1}, {Sort: "nope"}, {Sort: "qty", Direction: "up"},
		{Filters: []catalog.Filter{{Column: "qty", Op: "gt", Value: "many"}}}, {Search: strings.Repeat("ä", catalog.MaxSearchChars+1)}} {
		_, errA := s.Rows(ctx, local.Tables[0].ID, bad)
		_, errB := s.Rows(ctx, remote.Tables[0].ID, bad)
		if datadesk.ErrorCode(errA) != datadesk.Invalid || datadesk.ErrorCode(errB) != datadesk.Invalid || errA.Error() != errB.Error() {
			t.Errorf("page %+v: errors %v and %v, want the same invalid", bad, errA, errB)
		}
	}

	// A decimal's average is DuckDB's exactly, every time.
	avgOf := func(id string) any {
		return ask(t, s, catalog.Query{FileID: id, Aggregates: []catalog.Aggregate{{Op: "avg", Column: "amount"}}}).Aggregates["avg_amount"]
	}
	avgWant := avgOf(local.ID)
	for range 5 {
		if got := avgOf(remote.ID); got != avgWant {
			t.Errorf("avg of a decimal on clickhouse %v, duckdb %v", got, avgWant)
		}
	}

	scanAll := func(id string) []string {
		var out []string
		if _, err := s.Scan(ctx, id, func(row []any) error {
			out = append(out, fmt.Sprintf("%#v", row))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// show=true of derived results: the view stored on the cluster holds
	// the same rows, in the same order, as the one stored in DuckDB.
	scanNorm := func(id string) string {
		var b strings.Builder
		if _, err := s.Scan(ctx, id, func(row []any) error {
			for _, v := range row {
				if tm, ok := v.(time.Time); ok {
					v = tm.Format(time.RFC3339Nano)
				}
				fmt.Fprintf(&b, "%v|", norm(v))
			}
			b.WriteByte('\n')
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for n := 0; n < 25; {
		q := equivQuery(rng, rows, cells)
		q.Show = true
		views := make([]*catalog.View, 2)
		for i, f := range []*catalog.File{local, remote} {
			q.FileID = f.ID
			p, err := s.Plan(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if views[i], err = s.Show(ctx, p, res); err != nil {
				t.Fatal(err)
			}
		}
		if views[0] == nil || !views[0].Derived {
			continue
		}
		n++
		qj, _ := json.Marshal(q)
		if views[1] == nil || views[1].RowCount != views[0].RowCount {
			t.Errorf("show %s: cluster view %+v, want %d rows", qj, views[1], views[0].RowCount)
			continue
		}
		if a, b := scanNorm(views[0].TableID), scanNorm(views[1].TableID); a != b {
			t.Errorf("show %s: the cluster's view differs\nduckdb:\n%.600s\nclickhouse:\n%.600s", qj, a, b)
		}
	}
	want := scanAll(local.Tables[0].ID)
	if got := scanAll(remote.Tables[0].ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("scan of the cluster's copy differs from DuckDB's")
	}

	back, err := s.MoveTable(ctx, remote.Tables[0].ID, catalog.LocationDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	if back.Location != catalog.LocationDuckDB {
		t.Fatalf("location %q after moving back, want duckdb", back.Location)
	}
	if got := scanAll(back.ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table moved back differs from the original")
	}
	ta, _ := s.SQLTypes(ctx, &local.Tables[0])
	tb, _ := s.SQLTypes(ctx, back)
	if fmt.Sprint(ta) != fmt.Sprint(tb) {
		t.Errorf("types after moving back %v, want %v", tb, ta)
	}
	// The cluster's copy stays a moment for readers that found it there,
	// then goes.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n, err := ch.Count(ctx, back)
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the cluster still holds %d rows of the moved-back table", n)
			break
		}
	}
}

// sameQueryOnBoth asks query q (the n-th) of the table on DuckDB and of
// its copy on the cluster, and streams every fifth ungrouped one whole
// from both: the answers must be the same.
func sameQueryOnBoth(t *testing.T, s *Store, q catalog.Query, n int, local, remote string) {
	ctx := context.Background()
	qj, _ := json.Marshal(q)
	run := func(fileID string) *catalog.QueryResult {
		q.FileID = fileID
		p, err := s.Plan(ctx, q)
		if err != nil {
			t.Errorf("query %d %s: plan: %v", n, qj, err)
			return nil
		}
		res, err := s.Run(ctx, p)
		if err != nil {
			t.Errorf("query %d %s: run: %v", n, qj, err)
			return nil
		}
		return res
	}
	want, got := run(local), run(remote)
	if want == nil || got == nil {
		return
	}
	if diff := sameResult(want, got); diff != "" {
		t.Errorf("query %d %s\nclickhouse %s\nduckdb: %s", n, qj, got.SQL, diff)
	}
	if n%5 == 0 && len(q.GroupBy) == 0 {
		if a, b := streamAll(t, s, local, q), streamAll(t, s, remote, q); a != b {
			t.Errorf("stream %d %s differs\nduckdb:\n%.600s\nclickhouse:\n%.600s", n, qj, a, b)
		}
	}
}

// streamAll is every row Stream sends for q on the table of file id, one
// line a row.
func streamAll(t *testing.T, s *Store, id string, q catalog.Query) string {
	t.Helper()
	q.FileID = id
	p, err := s.Plan(context.Background(), q)
	if err != nil {
		t.Errorf("stream: %v", err)
		return ""
	}
	var b strings.Builder
	err = s.Stream(context.Background(), p, func(row []any) error {
		for _, v := range row {
			if tm, ok := v.(time.Time); ok {
				v = tm.Format(time.RFC3339Nano)
			}
			fmt.Fprintf(&b, "%v|", norm(v))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Errorf("stream: %v", err)
		return ""
	}
	return b.String()
}

// TestClickHousePlacement checks that a table past the configured size goes
// to the cluster on upload, that deleting its file removes it there, and
// that moves are refused with a clear error where they cannot happen.
func TestClickHousePlacement(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	ctx := context.Background()
	e := newClusterEngine(t, ch, 100)
	s := acquire(t, e, datadesk.NewID("u"))
	rowsOf := func(n int) [][]string {
		var out [][]string
		for i := range n {
			out = append(out, []string{fmt.Sprintf("%05d", i), fmt.Sprint(i % 3)})
		}
		return out
	}
	add := func(n int) *catalog.File {
		f, err := s.AddFile(ctx, NewFile{Filename: "p.csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource("p", []string{"code", "n"}, rowsOf(n))}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	big, small := add(150), add(20)
	if got := big.Tables[0].Location; got != catalog.LocationClickHouse {
		t.Errorf("150-row table is in %s, want clickhouse", got)
	}
	if got := small.Tables[0].Location; got != catalog.LocationDuckDB {
		t.Errorf("20-row table is in %s, want duckdb", got)
	}
	stored, err := s.Table(ctx, big.ID)
	if err != nil || stored.Location != catalog.LocationClickHouse {
		t.Fatalf("catalog entry after reopen: %+v, %v", stored, err)
	}
	if n, err := ch.Count(ctx, stored); err != nil || n != 150 {
		t.Fatalf("cluster holds %d rows (%v), want 150", n, err)
	}

	p, err := s.Plan(ctx, catalog.Query{FileID: big.ID, Filters: []catalog.Filter{{Column: "n", Op: "eq", Value: json.Number("1")}}, Show: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.MatchedRowCount != 50 {
		t.Errorf("matched %d, want 50", res.MatchedRowCount)
	}
	view, err := s.Show(ctx, p, res)
	if err != nil {
		t.Fatal(err)
	}
	vt, err := s.Table(ctx, view.TableID)
	if err != nil || vt.Location != catalog.LocationClickHouse || vt.RowCount != 50 || !view.Derived {
		t.Errorf("derived view %+v: table %+v, %v; want 50 rows on the cluster", view, vt, err)
	}
	whole, _ := s.Plan(ctx, catalog.Query{FileID: big.ID, Show: true})
	if v, err := s.Show(ctx, whole, res); err != nil || v.TableID != stored.ID {
		t.Errorf("show of the whole table: %+v, %v", v, err)
	}

	for _, tc := range []struct {
		to   string
		e    *Engine
		code datadesk.Code
	}{
		{"s3", e, datadesk.Invalid},
		{catalog.LocationClickHouse, newEngine(t), datadesk.Invalid},
	} {
		st := acquire(t, tc.e, datadesk.NewID("u"))
		f, err := st.AddFile(ctx, NewFile{Filename: "q.csv", TempPath: tempBytes(t, st, "x"),
			Tables: []TableSource{rowsSource("q", []string{"a"}, [][]string{{"1"}})}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.MoveTable(ctx, f.ID, tc.to); datadesk.ErrorCode(err) != tc.code {
			t.Errorf("move to %s: %v, want %s", tc.to, err, tc.code)
		}
	}

	copied, err := s.AddFile(ctx, NewFile{Filename: "copy.csv", TempPath: tempBytes(t, s, "x"), CopyOf: big.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := copied.Tables[0].Location; got != catalog.LocationClickHouse {
		t.Errorf("copy of a cluster table is in %s, want clickhouse", got)
	}
	scan := func(id string) string {
		var b strings.Builder
		if _, err := s.Scan(ctx, id, func(row []any) error { fmt.Fprintf(&b, "%v\n", row); return nil }); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if a, b := scan(big.ID), scan(copied.ID); a != b || len(a) == 0 {
		t.Errorf("copy differs from its source")
	}

	if err := s.DeleteFile(ctx, big.ID); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []*catalog.Table{stored, vt} {
		if _, err := ch.Count(ctx, gone); err == nil {
			t.Errorf("the cluster still holds %s of the deleted file", gone.ID)
		}
	}
	if n, err := ch.Count(ctx, &copied.Tables[0]); err != nil || n != 150 {
		t.Errorf("the copy holds %d rows (%v) after its source was deleted, want 150", n, err)
	}
}

// TestClickHouseIngestStreams uploads one generated table to a store that
// places tables of 100 rows or more on the cluster and to one without a
// cluster, and checks that the cluster's table was written there directly
// (no DuckDB table of it ever existed), with the same column decisions,
// types and values; and that a failed upload leaves nothing on the cluster.
func TestClickHouseIngestStreams(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 5))
	cells := equivCells(genOracleRows(600, rng), rng)
	src := rowsSource("o", equivHeader, cells)
	scan := func(s *Store, id string) string {
		var b strings.Builder
		if _, err := s.Scan(ctx, id, func(row []any) error { fmt.Fprintf(&b, "%#v\n", row); return nil }); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	ls := acquire(t, newEngine(t), datadesk.NewID("u"))
	local, err := ls.AddFile(ctx, NewFile{Filename: "o.csv", TempPath: tempBytes(t, ls, "x"), Tables: []TableSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	rs := acquire(t, newClusterEngine(t, ch, 100), datadesk.NewID("u"))
	remote, err := rs.AddFile(ctx, NewFile{Filename: "o.csv", TempPath: tempBytes(t, rs, "x"), Tables: []TableSource{src}})
	if err != nil {
		t.Fatal(err)
	}
	lt, rt := &local.Tables[0], &remote.Tables[0]
	if rt.Location != catalog.LocationClickHouse {
		t.Fatalf("600-row table is in %s, want clickhouse", rt.Location)
	}
	// Whether an identifier's values are all digits is measured in DuckDB
	// alone: the cluster's tables order by the whole natural order.
	measured := slices.Clone(lt.Columns)
	for i := range measured {
		measured[i].Digits = catalog.DigitsUnknown
	}
	if fmt.Sprint(measured) != fmt.Sprint(rt.Columns) || fmt.Sprint(lt.Report.Columns) != fmt.Sprint(rt.Report.Columns) {
		t.Errorf("column decisions differ:\nduckdb     %v\nclickhouse %v", lt.Columns, rt.Columns)
	}
	var n int
	if err := rs.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'data' AND table_name = ?`, rt.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("DuckDB holds %d tables named %s (%v), want none", n, rt.ID, err)
	}
	lTypes, err := ls.SQLTypes(ctx, lt)
	if err != nil {
		t.Fatal(err)
	}
	rTypes, err := ch.SQLTypes(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(lTypes) != fmt.Sprint(rTypes) {
		t.Errorf("types %v on the cluster, want %v", rTypes, lTypes)
	}
	if a, b := scan(ls, lt.ID), scan(rs, rt.ID); a != b {
		t.Errorf("values on the cluster differ from DuckDB's")
	}

	tables := func() int64 {
		names, err := ch.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int64(len(names))
	}
	before := tables()
	long := append(append([][]string(nil), cells[:150]...), []string{strings.Repeat("x", MaxCellChars+1)})
	_, err = rs.AddFile(ctx, NewFile{Filename: "o.xlsx", TempPath: tempBytes(t, rs, "x"),
		Tables: []TableSource{src, rowsSource("bad", equivHeader, long)}})
	if datadesk.ErrorCode(err) != datadesk.Invalid {
		t.Fatalf("upload with an overlong cell: %v, want invalid", err)
	}
	if after := tables(); after != before {
		t.Errorf("the cluster has %d tables after a failed upload, %d before", after, before)
	}
}

// TestClickHouseLongNamesAndValues: a header or an aggregate name of 40 CJK
// characters made ClickHouse fail ("File name too long": it names files
// by columns), and a filter value past 256 KiB passed its parser's limit;
// each was a 500. Columns whose names would be too long get a name of
// their own on the cluster, and statements may be long.
func TestClickHouseLongNamesAndValues(t *testing.T) {
	ch := testClickHouse(t)
	ctx := context.Background()
	e := newClusterEngine(t, ch, 10)
	s := acquire(t, e, datadesk.NewID("u"))
	long := strings.Repeat("長い列の名前", 7)
	var rows [][]string
	for i := range 30 {
		rows = append(rows, []string{fmt.Sprintf("%03d", i), fmt.Sprint(i % 4)})
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "l.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("l", []string{long, "n"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Tables[0].Location != catalog.LocationClickHouse {
		t.Fatalf("the table is in %s", f.Tables[0].Location)
	}
	key := f.Tables[0].Columns[0].Key
	aggName := strings.Repeat("合計の名前", 9)
	for _, q := range []catalog.Query{
		{FileID: f.ID, Filters: []catalog.Filter{{Column: key, Op: "eq", Value: "007"}}, Limit: 5},
		{FileID: f.ID, Filters: []catalog.Filter{{Column: key, Op: "contains", Value: strings.Repeat("x", 300<<10)}}},
		{FileID: f.ID, GroupBy: []string{"n"}, Aggregates: []catalog.Aggregate{{Op: "count", Name: aggName}, {Op: "sum", Column: "n", Name: aggName + "2"}}, Show: true},
		{FileID: f.ID, Columns: []string{key}, SortBy: key, Direction: "desc", Limit: 3},
	} {
		p, err := s.Plan(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(ctx, p)
		if err != nil {
			t.Errorf("%+v: %v", q.Filters, err)
			continue
		}
		if q.Show {
			v, err := s.Show(ctx, p, res)
			if err != nil {
				t.Errorf("show: %v", err)
				continue
			}
			page, err := s.Rows(ctx, v.TableID, catalog.PageRequest{Limit: 10})
			if err != nil || len(page.Rows) != 4 {
				t.Errorf("the shown view: %v %v", page, err)
			}
		}
	}
}

// TestClickHouseNaturalOrder: an identifier column of digits orders as
// numbers on the cluster as in DuckDB: pages, query_table's rows and
// groups, analysis groups, and min and max.
func TestClickHouseNaturalOrder(t *testing.T) {
	ch := testClickHouse(t)
	ctx := context.Background()
	e := newClusterEngine(t, ch, 0)
	s := acquire(t, e, datadesk.NewID("u"))
	values := []string{"10", "9", "100", "007", "7", "1", "2", "20", "B-1", "A-2", ""}
	var cells [][]string
	for _, id := range values {
		cells = append(cells, []string{id, "1"})
	}
	add := func() *catalog.File {
		f, err := s.AddFile(ctx, NewFile{Filename: "o.csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource("o", []string{"order_id", "qty"}, cells)}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	local, remote := add(), add()
	if c := local.Tables[0].Columns[0]; !c.Natural() {
		t.Fatalf("order_id is %s, identifier %v", c.Type, c.Identifier)
	}
	if _, err := s.MoveTable(ctx, remote.Tables[0].ID, catalog.LocationClickHouse); err != nil {
		t.Fatal(err)
	}
	t.Run("duckdb", func(t *testing.T) { checkNaturalOrder(t, s, local, values) })
	t.Run("clickhouse", func(t *testing.T) { checkNaturalOrder(t, s, remote, values) })
}
