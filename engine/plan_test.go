package engine

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"datadesk"
	"datadesk/engine/catalog"
)

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
		p, err := s.Plan(context.Background(), catalog.Query{FileID: f.ID, Filters: []catalog.Filter{{Column: "region", Op: "eq", Value: "North"}}})
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
