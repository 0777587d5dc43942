package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"datadesk"
	"datadesk/engine/catalog"
)

// TestMovesBackAndForth: a move back to the cluster within a minute of a
// move away failed with a bare internal error: the first move's delayed
// sweep dropped the new copy of the same name while it was being written.
// Moves and sweeps now take turns: round trips in quick succession, each
// move to the cluster with a sweep of every retired copy asked as it
// begins to write, all succeed with every row.
func TestMovesBackAndForth(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	ctx := context.Background()
	s := acquire(t, newClusterEngine(t, ch, 0), datadesk.NewID("u"))
	rows := make([][]string, 60_000)
	for i := range rows {
		rows[i] = []string{fmt.Sprint(i), fmt.Sprintf("customer %d", i%700)}
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "t", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{rowsSource("t", []string{"id", "customer"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	id := f.Tables[0].ID
	// The sweep starts while the move holds the moves' lock and writes: it
	// must wait for its turn, then keep the copy the move made the table's
	// place. Before moves and sweeps took turns it dropped that copy.
	swept := make(chan error, 1)
	s.testHookMoveOut = func() {
		go func() { swept <- s.sweepMoves(ctx, time.Now(), false) }()
	}
	for round := range 6 {
		for _, to := range []string{catalog.LocationDuckDB, catalog.LocationClickHouse} {
			moved, err := s.MoveTable(ctx, id, to)
			if err != nil {
				t.Fatalf("round %d, move to %s: %v", round, to, err)
			}
			if to == catalog.LocationClickHouse {
				if err := <-swept; err != nil {
					t.Fatalf("round %d, the sweep during the move: %v", round, err)
				}
			}
			p, err := s.Plan(ctx, catalog.Query{FileID: id})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(ctx, p)
			if err != nil || res.MatchedRowCount != int64(len(rows)) || moved.Location != to {
				t.Fatalf("round %d on %s: %v rows, %v", round, to, res, err)
			}
		}
	}
}

// TestMoveInLetsUploadsGoOn: a move to DuckDB held the owner's write
// transaction for the whole copy, and uploads waited 56 to 60 s. The rows
// now arrive outside it and only the switch holds it: uploads of the
// owner finish while the move is still copying.
func TestMoveInLetsUploadsGoOn(t *testing.T) {
	t.Parallel()
	ch := testClickHouse(t)
	ctx := context.Background()
	s := acquire(t, newClusterEngine(t, ch, 0), datadesk.NewID("u"))
	rows := make([][]string, 400_000)
	for i := range rows {
		rows[i] = []string{fmt.Sprint(i), fmt.Sprintf("customer %d", i%700), fmt.Sprint(i % 97)}
	}
	f, err := s.AddFile(ctx, NewFile{Filename: "t", TempPath: tempBytes(t, s, "x"), Tables: []TableSource{rowsSource("t", []string{"id", "customer", "n"}, rows)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveTable(ctx, f.Tables[0].ID, catalog.LocationClickHouse); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.MoveTable(ctx, f.Tables[0].ID, catalog.LocationDuckDB)
		done <- err
	}()
	uploads := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if uploads < 2 {
				t.Errorf("%d uploads finished while the move copied, want them to go on", uploads)
			}
			t.Logf("%d uploads during the move", uploads)
			return
		default:
		}
		if _, err := s.AddFile(ctx, NewFile{Filename: "small", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource("small", []string{"a"}, [][]string{{"1"}, {"2"}})}}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			// The move ended during this upload: not counted.
			done <- err
		default:
			uploads++
		}
	}
}
