package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
)

// TestMoveWhileAnswering moves a table to the cluster and back while
// callers keep asking for it and for another table of the same owner:
// every answer is right, none fails, and each old copy goes after the
// switch.
func TestMoveWhileAnswering(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	e := newClusterEngine(t, ch, 0)
	owner := datadesk.NewID("u")
	s := acquire(t, e, owner)
	ctx := context.Background()
	rows := make([][]string, 20000)
	var sum int64
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("%06d", i), strconv.Itoa(i % 97)}
		sum += int64(i % 97)
	}
	add := func(name string) *catalog.File {
		f, err := s.AddFile(ctx, NewFile{Filename: name + ".csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource(name, []string{"id", "n"}, rows)}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	moving, other := add("moving"), add("other")
	want := fmt.Sprintf("%d %d", len(rows), sum)
	ask := func(id string) (string, error) {
		st, release, err := e.Acquire(ctx, owner)
		if err != nil {
			return "", err
		}
		defer release()
		p, err := st.Plan(ctx, catalog.Query{FileID: id, Aggregates: []catalog.Aggregate{{Op: "sum", Column: "n"}}})
		if err != nil {
			return "", err
		}
		res, err := st.Run(ctx, p)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d %v", res.MatchedRowCount, res.Aggregates["sum_n"]), nil
	}
	var questions []func() (string, error)
	for _, id := range []string{moving.ID, moving.ID, other.ID} {
		questions = append(questions, func() (string, error) { return ask(id) })
	}
	calls := keepAsking(t, questions, want, func() {
		for _, to := range []string{catalog.LocationClickHouse, catalog.LocationDuckDB, catalog.LocationClickHouse} {
			tbl, err := s.MoveTable(ctx, moving.Tables[0].ID, to)
			if err != nil {
				t.Fatal(err)
			}
			if tbl.Location != to {
				t.Fatalf("location %s after the move, want %s", tbl.Location, to)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Logf("%d answers during three moves", calls)
	// The DuckDB copy left by the last move goes once readers are done.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'data' AND table_name = ?`,
			moving.Tables[0].ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the DuckDB copy of the moved table is still there")
		}
	}
}

// TestKilledMoveLeavesNothing: a move to the cluster killed after its rows
// arrived but before the catalog switched leaves a copy on the cluster; the
// next start drops it, and the table answers from DuckDB as before.
func TestKilledMoveLeavesNothing(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	dir := t.TempDir()
	cfg := Config{Dir: dir, MemoryLimit: "256MB", MaxTempSize: "1GB", Remote: ch}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	owner := datadesk.NewID("u")
	s, release, err := e.Acquire(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := s.AddFile(ctx, NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"),
		Tables: []TableSource{rowsSource("t", []string{"id", "n"}, [][]string{{"001", "1"}, {"002", "2"}})}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := &f.Tables[0]
	// What moveOut does before the switch, then the process dies.
	types, err := s.SQLTypes(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.journal(ctx, tbl.ID, ch.Name(), moveCopy); err != nil {
		t.Fatal(err)
	}
	if err := ch.Put(ctx, tbl, types, func(w catalog.RowWriter) error {
		id, n := "001", "1"
		return w.Write([]*string{&id, &n})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Count(ctx, tbl); err != nil {
		t.Fatalf("the half-moved copy is not on the cluster: %v", err)
	}
	release()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s = acquire(t, e, owner)
	if n, err := ch.Count(ctx, tbl); err == nil {
		t.Errorf("the killed move's copy is still on the cluster with %d rows", n)
	}
	got, err := s.Table(ctx, tbl.ID)
	if err != nil || got.Location != catalog.LocationDuckDB {
		t.Fatalf("table after the restart: %v %v", got, err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM dd_moves`).Scan(&n); err != nil || n != 0 {
		t.Errorf("journal rows after the sweep: %d %v", n, err)
	}
}

// keepAsking has a caller per question ask it over and over while during
// runs, and reports every failed or wrong answer; it returns how many
// answers came.
func keepAsking(t *testing.T, questions []func() (string, error), want string, during func()) int64 {
	t.Helper()
	return keepAskingCounted(t, questions, want, func(func() int64) { during() })
}

// keepAskingCounted is keepAsking with during given the count of right
// answers so far, to wait for answers rather than for time.
func keepAskingCounted(t *testing.T, questions []func() (string, error), want string, during func(answered func() int64)) int64 {
	t.Helper()
	var stop atomic.Bool
	var calls atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(questions))
	for _, ask := range questions {
		wg.Go(func() {
			for !stop.Load() {
				got, err := ask()
				if err == nil && got != want {
					err = fmt.Errorf("answer %q, want %q", got, want)
				}
				if err != nil {
					errs <- err
					return
				}
				calls.Add(1)
			}
		})
	}
	func() {
		defer func() { stop.Store(true); wg.Wait() }()
		during(calls.Load)
	}()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return calls.Load()
}

// waitAnswers waits until answered reaches n, and fails the test if it
// does not within a minute (the callers stop at their first wrong answer).
func waitAnswers(t *testing.T, answered func() int64, n int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); answered() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%d answers within a minute, want %d", answered(), n)
			return
		}
	}
}
