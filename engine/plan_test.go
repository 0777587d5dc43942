package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"datadesk"
)

var update = flag.Bool("update", false, "rewrite golden files")

// planTable is the table the golden plans are made against.
var planTable = &Table{ID: "t_golden", FileID: "f_x", Name: "orders", RowCount: 1000, Columns: []Column{
	{Key: "id", Type: TypeText, Identifier: true},
	{Key: "region", Type: TypeText},
	{Key: "qty", Type: TypeInteger},
	{Key: "amount", Type: TypeDecimal},
	{Key: "day", Type: TypeDate},
	{Key: "flag", Type: TypeBoolean},
	{Key: "note", Type: TypeText},
}}

// TestPlanGolden turns each testdata/plans/*.json query into its statement
// and bound values and compares them with the .sql.golden beside it; run
// with -update to rewrite the golden files after a deliberate change.
func TestPlanGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "plans", "*.json"))
	if len(files) == 0 {
		t.Fatal("no plans")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var q Query
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&q); err != nil {
				t.Fatal(err)
			}
			p, err := PlanFor(planTable, q)
			if err != nil {
				t.Fatal(err)
			}
			sql, params := p.SQL()
			pj, _ := json.Marshal(params)
			got := strings.ReplaceAll(sql, " FROM ", "\n FROM ") + "\n-- params: " + string(pj) + "\n"
			golden := strings.TrimSuffix(f, ".json") + ".sql.golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestPlanGoldenClickHouse compiles the same plans to ClickHouse SQL and
// compares them with the .ch.sql.golden files beside them.
func TestPlanGoldenClickHouse(t *testing.T) {
	ch := &ClickHouse{cfg: ClickHouseConfig{Cluster: "datadesk", Database: "datadesk"}}
	files, _ := filepath.Glob(filepath.Join("testdata", "plans", "*.json"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var q Query
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&q); err != nil {
				t.Fatal(err)
			}
			p, err := PlanFor(planTable, q)
			if err != nil {
				t.Fatal(err)
			}
			stmts, err := ch.Statements(p)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(strings.Join(stmts, ";\n"), " FROM ", "\n FROM ") + "\n"
			golden := strings.TrimSuffix(f, ".json") + ".ch.sql.golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestDebugLogsSQL: at debug level each query logs the statement it ran
// with its bound values; above it, nothing.
func TestDebugLogsSQL(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var log bytes.Buffer
		e, err := New(Config{Dir: t.TempDir(), MemoryLimit: "128MB", Logger: slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: level}))})
		if err != nil {
			t.Fatal(err)
		}
		s := acquire(t, e, datadesk.NewID("u"))
		f, err := s.AddFile(context.Background(), NewFile{Filename: "t.csv", TempPath: tempBytes(t, s, "x"),
			Tables: []TableSource{rowsSource("t", []string{"region", "n"}, [][]string{{"north", "1"}, {"south", "2"}})}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Plan(context.Background(), Query{FileID: f.ID, Filters: []Filter{{Column: "region", Op: "eq", Value: "North"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		logged := strings.Contains(log.String(), `lower(\"region\") = lower(?)`) && strings.Contains(log.String(), `"params":["North"]`)
		if logged != (level == slog.LevelDebug) {
			t.Errorf("level %s: the SQL logged is %v:\n%s", level, logged, log.String())
		}
		e.Close()
	}
}
